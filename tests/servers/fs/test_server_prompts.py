"""Prompts and completions through the in-memory client."""

import unicodedata
from typing import Any

import pytest

from checked import connect
from mcpkit.testing import RPCError
from servers.fs.conftest import Tree
from servers.fs.served import server_for


async def test_path_completion(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        ref = {"type": "ref/resource", "uri": "file:///{+path}"}
        value = str(tree.root / "s").removeprefix("/")
        completed = await client.request(
            "completion/complete", {"ref": ref, "argument": {"name": "path", "value": value}}
        )
        assert completed["completion"]["values"] == [value + "ub/"]
        prompt = {"type": "ref/prompt", "name": "review_file"}
        start = str(tree.root)[:-2]
        suggested = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "path", "value": start}}
        )
        assert suggested["completion"]["values"] == [f"{tree.root}/"]
        focuses = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "focus", "value": "Se"}}
        )
        assert focuses["completion"]["values"] == ["security"]

        async def complete(value: str) -> dict[str, Any]:
            answer = await client.request(
                "completion/complete",
                {"ref": prompt, "argument": {"name": "path", "value": value}},
            )
            return answer["completion"]

        assert (await complete(f"{tree.out}/"))["values"] == []
        # The allowed directory itself goes on into its entries.
        entries = (await complete(str(tree.root)))["values"]
        assert entries == [f"{tree.root}/"]
        inside = (await complete(entries[0]))["values"]
        # Directories first, as a listing gives them.
        names = sorted((not p.is_dir(), p.name + "/" * p.is_dir()) for p in tree.root.iterdir())
        assert inside == [f"{tree.root}/{name}" for _, name in names]
        # Relative paths are in the first allowed directory, as the tools read them.
        assert (await complete("s"))["values"] == ["sub/"]
        assert (await complete("sub/"))["values"] == ["sub/inner.txt"]
        # More than 100: the first 100 by name, and how many there are.
        many = tree.root / "many"
        many.mkdir()
        for n in range(10_050):
            (many / f"f{n:05}").touch()
        crowded = await complete(f"{many}/f")
        assert (len(crowded["values"]), crowded["total"], crowded["hasMore"]) == (100, 10_050, True)
        assert crowded["values"][0] == f"{many}/f00000"
        last = await complete(f"{many}/f1004")
        assert last["values"] == [f"{many}/f1004{n}" for n in range(10)]
        assert (await complete(f"{many}/f10049"))["values"] == [f"{many}/f10049"]


async def test_path_completion_of_home_paths(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree.root))
    async with connect(server_for(tree.root)) as client:
        prompt = {"type": "ref/prompt", "name": "review_file"}
        completed = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "path", "value": "~/su"}}
        )
        assert completed["completion"]["values"] == ["~/sub/"]
    # An allowed directory whose name only begins as the home directory's is not in it.
    async with connect(server_for(tree.root / "sub", tree.base / "root-evil")) as client:
        completed = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "path", "value": "~"}}
        )
        assert completed["completion"]["values"] == ["~/sub/"]


async def test_path_completion_in_another_unicode_form(tree: Tree) -> None:
    (tree.root / unicodedata.normalize("NFD", "répertoire")).mkdir()
    async with connect(server_for(tree.root)) as client:
        typed = unicodedata.normalize("NFC", "ré")
        template = {"type": "ref/resource", "uri": "file:///{+path}"}
        argument = {"name": "path", "value": f"{str(tree.root).lstrip('/')}/{typed}"}
        completed = await client.request(
            "completion/complete", {"ref": template, "argument": argument}
        )
    (value,) = completed["completion"]["values"]
    assert value.endswith(unicodedata.normalize("NFD", "répertoire") + "/")  # as it is on disk


async def test_prompts(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        names = [p["name"] for p in (await client.request("prompts/list"))["prompts"]]
        assert names == ["review_file", "summarize_directory", "find_and_explain"]
        review = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "hello.txt"}}
        )
        embedded, ask = review["messages"]
        assert embedded["content"]["resource"]["text"] == "hello\n"
        assert embedded["content"]["resource"]["mimeType"] == "text/plain"
        assert "correctness" in ask["content"]["text"]
        assert "Only lines" not in ask["content"]["text"]
        big = tree.root / "big.py"
        big.write_text("".join(f"x_{n} = {n}  # {'-' * 60}\n" for n in range(20_000)))
        cut = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "big.py"}}
        )
        embedded, ask = cut["messages"]
        assert embedded["content"]["resource"]["mimeType"] == "text/x-python"
        shown = embedded["content"]["resource"]["text"].count("\n")
        assert 0 < shown < 20_000
        assert ask["content"]["text"].endswith(
            f" Only lines 1-{shown} of 20000 are shown above: read the rest with read_text_file"
            f" from offset {shown + 1} before judging the whole."
        )
        (tree.root / "min.js").write_text("x" * (300 * 1024))
        minified = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "min.js"}}
        )
        embedded, ask = minified["messages"]
        assert embedded["content"]["resource"]["text"] == "x" * (256 * 1024)
        assert ask["content"]["text"].endswith(
            " Line 1 is too long to show whole: only its start is above."
        )
        summary = await client.request(
            "prompts/get", {"name": "summarize_directory", "arguments": {"path": "."}}
        )
        assert "inner.txt" in summary["messages"][0]["content"]["text"]
        with pytest.raises(RPCError) as refused:
            await client.request(
                "prompts/get", {"name": "review_file", "arguments": {"path": "../out/secret.txt"}}
            )
        assert refused.value.code == -32602


async def test_summarize_directory_shows_every_top_level_entry_of_a_large_tree(
    tree: Tree,
) -> None:
    for n in range(50):
        package = tree.root / "big" / f"pkg{n}"
        package.mkdir(parents=True)
        for m in range(20):
            (package / f"m{m}.py").touch()
    async with connect(server_for(tree.root)) as client:
        summary = await client.request(
            "prompts/get", {"name": "summarize_directory", "arguments": {"path": "big"}}
        )
    text = summary["messages"][0]["content"]["text"]
    assert "Its tree (JSON, depth 1)" in text
    assert all(f'"pkg{n}"' in text for n in range(50))
