"""mcp-fs resources, subscriptions, completions, prompts and logging, over stdio."""

import os
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from e2e.fs_helpers import FsTree, another_process_writes, as_nobody, never_leaked
from e2e.harness import LATEST, Everything

IGNORE_SUBSCRIBE_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:resources/(un)?subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
)
IGNORE_ROOTS_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:The roots capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
)
IGNORE_LOGGING_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:The logging capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
)


async def test_resources(everything: Everything, fs: FsTree) -> None:
    (fs.root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 4)
    async with everything.connect(LATEST, command=fs.command()) as conn:
        session = conn.session
        with anyio.fail_after(10):
            listed = (await session.list_resources()).resources
            templates = (await session.list_resource_templates()).resource_templates
            directory = (await session.read_resource(f"file://{fs.root}")).contents
            text = (await session.read_resource(f"file://{fs.root}/src/app.py")).contents
            blob = (await session.read_resource(f"file://{fs.root}/logo.png")).contents
            with pytest.raises(MCPError) as refused:
                await session.read_resource(f"file://{fs.out}/secret.txt")
        never_leaked(conn)
    assert [str(r.uri) for r in listed] == [f"file://{fs.root}"]
    assert [t.uri_template for t in templates] == ["file:///{+path}"]
    assert isinstance(directory[0], types.TextResourceContents)
    assert directory[0].text == "src/\nREADME.md\nlogo.png\n"
    assert isinstance(text[0], types.TextResourceContents)
    assert (text[0].mime_type, text[0].text) == ("text/x-python", "def main():\n    return 1\n")
    assert isinstance(blob[0], types.BlobResourceContents)
    assert blob[0].mime_type == "image/png"
    assert refused.value.error.code == -32002


@IGNORE_SUBSCRIBE_DEPRECATION
async def test_subscription_hears_another_process(everything: Everything, fs: FsTree) -> None:
    app = fs.root / "src" / "app.py"
    file_uri, dir_uri = f"file://{app}", f"file://{fs.root}/src"
    async with everything.connect(LATEST, command=fs.command()) as conn:
        session, inbox = conn.session, conn.inbox
        with anyio.fail_after(10):
            await session.subscribe_resource(file_uri)  # pyright: ignore[reportDeprecated]
            await session.subscribe_resource(dir_uri)  # pyright: ignore[reportDeprecated]
            another_process_writes(app, "def main():\n    return 2\n")
            update = await inbox.wait_for(types.ResourceUpdatedNotification, timeout=5)
            assert str(update.params.uri) == file_uri
            another_process_writes(fs.root / "src" / "new.py", "")
            await inbox.wait_for(
                types.ResourceUpdatedNotification,
                lambda n: str(n.params.uri) == dir_uri,
                timeout=5,
            )
    updates = conn.record.notifications("notifications/resources/updated")
    assert [n["params"]["uri"] for n in updates] == [file_uri, dir_uri]


@pytest.fixture
def project_in_a_711_home(open_base: Path) -> Path:
    """A project whose parent, and one of whose directories, may be searched, not listed."""
    project = open_base / "home" / "project"
    (project / "private").mkdir(parents=True)
    (project / "notes.txt").write_text("one\n")
    (project / "private" / "f.txt").write_text("f\n")
    for unlisted in (project / "private", project.parent):
        unlisted.chmod(0o311)
    return project


@IGNORE_SUBSCRIBE_DEPRECATION
async def test_subscriptions_beside_directories_that_may_not_be_listed(
    everything: Everything, project_in_a_711_home: Path
) -> None:
    project = project_in_a_711_home
    command = as_nobody(str(project))
    async with everything.connect(LATEST, command=command) as conn:
        session, inbox = conn.session, conn.inbox
        with anyio.fail_after(20):
            # The watcher cannot watch there: refused, and the other watches go on.
            with pytest.raises(MCPError, match="its directory may not be listed"):
                await session.subscribe_resource(f"file://{project}/private/f.txt")  # pyright: ignore[reportDeprecated]
            await session.subscribe_resource(f"file://{project}/notes.txt")  # pyright: ignore[reportDeprecated]
            another_process_writes(project / "notes.txt", "two\n")
            update = await inbox.wait_for(types.ResourceUpdatedNotification, timeout=5)
    assert str(update.params.uri) == f"file://{project}/notes.txt"


@IGNORE_SUBSCRIBE_DEPRECATION
async def test_subscribing_outside_or_to_nothing_is_refused(
    everything: Everything, fs: FsTree
) -> None:
    (fs.root / "escape").symlink_to(fs.out)
    os.mkfifo(fs.root / "fifo")
    refused = [
        f"file://{fs.out}/secret.txt",
        f"file://{fs.root}/../out/secret.txt",
        f"file://{fs.root}/escape/secret.txt",
        f"file://{fs.root}/missing.txt",
        f"file://{fs.root}/fifo",  # as resources/read refuses it
    ]
    async with everything.connect(LATEST, command=fs.command()) as conn:
        codes: list[int] = []
        with anyio.fail_after(10):
            for uri in refused:
                with pytest.raises(MCPError) as error:
                    await conn.session.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
                codes.append(error.value.error.code)
            another_process_writes(fs.out / "secret.txt", "changed outside")
            await anyio.sleep(0.5)  # no update may follow for a refused subscription
        never_leaked(conn)
    assert codes == [-32002] * len(refused)
    assert conn.record.notifications("notifications/resources/updated") == []


async def test_completions_and_prompts(everything: Everything, fs: FsTree) -> None:
    async with everything.connect(LATEST, command=fs.command()) as conn:
        session = conn.session
        with anyio.fail_after(10):
            template = await session.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="file:///{+path}"),
                {"name": "path", "value": f"{fs.root}/s".removeprefix("/")},
            )
            prompt_path = await session.complete(
                types.PromptReference(type="ref/prompt", name="review_file"),
                {"name": "path", "value": f"{fs.root}/R"},
            )
            names = [p.name for p in (await session.list_prompts()).prompts]
            review = await session.get_prompt(
                "review_file", {"path": "src/app.py", "focus": "naming"}
            )
            explain = await session.get_prompt("find_and_explain", {"query": "main"})
    assert template.completion.values == [f"{fs.root}/src/".removeprefix("/")]
    assert prompt_path.completion.values == [f"{fs.root}/README.md"]
    assert names == ["review_file", "summarize_directory", "find_and_explain"]
    embedded = review.messages[0].content
    assert isinstance(embedded, types.EmbeddedResource)
    assert isinstance(embedded.resource, types.TextResourceContents)
    assert embedded.resource.text.startswith("def main")
    assert "naming" in str(review.messages[1].content)
    assert "search_content" in str(explain.messages[0].content)


@IGNORE_ROOTS_DEPRECATION
@IGNORE_SUBSCRIBE_DEPRECATION
async def test_client_roots_scope_completions_and_subscriptions(
    everything: Everything, fs: FsTree
) -> None:
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": [{"uri": f"file://{fs.root}/src"}]})

    app = fs.root / "src" / "app.py"
    review = types.PromptReference(type="ref/prompt", name="review_file")
    no_directories = [fs.command()[0]]  # the client's roots define what is allowed
    async with everything.connect(
        LATEST, command=no_directories, list_roots_callback=list_roots
    ) as conn:
        session, inbox = conn.session, conn.inbox
        with anyio.fail_after(10):
            inside = await session.complete(review, {"name": "path", "value": f"{fs.root}/src/a"})
            outside = await session.complete(review, {"name": "path", "value": f"{fs.root}/R"})
            await session.subscribe_resource(f"file://{app}")  # pyright: ignore[reportDeprecated]
            another_process_writes(app, "def main():\n    return 3\n")
            update = await inbox.wait_for(types.ResourceUpdatedNotification, timeout=5)
    assert inside.completion.values == [str(app)]
    assert outside.completion.values == []
    assert str(update.params.uri) == f"file://{app}"


@IGNORE_LOGGING_DEPRECATION
async def test_logging_follows_the_client_level(everything: Everything, fs: FsTree) -> None:
    async with everything.connect(LATEST, command=fs.command()) as conn:
        session = conn.session
        with anyio.fail_after(10):
            await session.set_logging_level("warning")  # pyright: ignore[reportDeprecated]
            await session.call_tool("read_text_file", {"path": "README.md"})
            await session.set_logging_level("info")  # pyright: ignore[reportDeprecated]
            await session.call_tool("write_file", {"path": "new.txt", "content": "x"})
    assert [entry.data for entry in conn.logs] == ["wrote new.txt (overwrite)"]
