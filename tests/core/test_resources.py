"""Resources, templates, subscriptions with watches and file watching."""

import base64
import shutil
from collections.abc import Callable, Coroutine, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import watchfiles
from watchfiles.main import FileChange

from checked import connect
from mcpkit import (
    Changed,
    Context,
    Resource,
    ResourceNotFound,
    Server,
    TextResourceContents,
    ToolError,
    runtime,
)
from mcpkit.jsonrpc import as_object
from mcpkit.runtime import MAX_SUBSCRIPTIONS
from mcpkit.testing import RPCError
from mcpkit.watch import FileWatcher


def make_server(watched: Path | None = None) -> tuple[Server, list[str]]:
    app = Server("resources", "1")
    watching: list[str] = []

    @app.resource("mem://text", mime_type="text/plain", size=5)
    async def text() -> str:
        """Some text."""
        return "hello"

    @app.resource("mem://blob", mime_type="application/octet-stream")
    async def blob() -> bytes:
        """Some bytes."""
        return b"\x00\x01\xff"

    @app.resource("mem://items/{item}", mime_type="text/plain")
    async def item(item: str) -> str:
        """One item."""
        if item == "missing":
            raise ResourceNotFound(f"mem://items/{item}")
        return f"item {item}"

    @app.resource("mem://both")
    async def both() -> list[TextResourceContents]:
        """Two documents."""
        return [
            TextResourceContents(uri="mem://both#1", text="a"),
            TextResourceContents(uri="mem://both#2", text="b"),
        ]

    @app.resource("file:///{+path}")
    async def file(path: str) -> str:
        """A file."""
        return await anyio.Path("/" + path).read_text()

    @app.watch("mem://items/{item}")
    async def watch_item(item: str, changed: Changed) -> None:
        watching.append(item)
        changed.in_place()
        try:
            while True:
                await anyio.sleep(0.05)
                await changed()
        finally:
            watching.remove(item)

    @app.watch("file:///{+path}")
    async def watch_file(path: str, changed: Changed) -> None:
        await changed.follow_files([Path("/" + path)])

    return app, watching


async def test_list_read_text_and_blob() -> None:
    app, _ = make_server()
    async with connect(app) as client:
        listed = (await client.request("resources/list"))["resources"]
        assert listed[0] == {
            "uri": "mem://text",
            "name": "text",
            "description": "Some text.",
            "mimeType": "text/plain",
            "size": 5,
        }
        assert [r["uri"] for r in listed] == ["mem://text", "mem://blob", "mem://both"]
        templates = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["mem://items/{item}", "file:///{+path}"]
        read = await client.request("resources/read", {"uri": "mem://text"})
        assert read == {
            "contents": [{"uri": "mem://text", "mimeType": "text/plain", "text": "hello"}]
        }
        read = await client.request("resources/read", {"uri": "mem://blob"})
        assert base64.b64decode(read["contents"][0]["blob"]) == b"\x00\x01\xff"
        read = await client.request("resources/read", {"uri": "mem://items/a%20b"})
        assert read["contents"][0] == {
            "uri": "mem://items/a%20b",
            "mimeType": "text/plain",
            "text": "item a b",
        }
        read = await client.request("resources/read", {"uri": "mem://both"})
        assert [c["text"] for c in read["contents"]] == ["a", "b"]


async def test_size_is_left_out_for_2024_11_05() -> None:
    app, _ = make_server()
    async with connect(app, protocol_version="2024-11-05") as client:
        listed = (await client.request("resources/list"))["resources"]
        assert "size" not in listed[0]


@pytest.mark.parametrize("uri", ["mem://nothing", "mem://items/missing", "mem://items/a/b"])
async def test_unknown_resources_are_32002_with_the_uri(uri: str) -> None:
    app, _ = make_server()
    async with connect(app) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("resources/read", {"uri": uri})
        assert refused.value.code == -32002
        assert refused.value.data == {"uri": uri}
        with pytest.raises(RPCError) as bad:
            await client.request("resources/read", {})
        assert bad.value.code == -32602


async def test_a_watch_runs_while_subscribed_and_reaches_only_subscribers() -> None:
    app, watching = make_server()
    async with connect(app) as subscriber, connect(app) as bystander:
        assert await subscriber.request("resources/subscribe", {"uri": "mem://items/1"}) == {}
        update = await subscriber.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": "mem://items/1"}
        assert watching == ["1"]
        assert await subscriber.request("resources/unsubscribe", {"uri": "mem://items/1"}) == {}
        await anyio.sleep(0.01)
        assert watching == []
        assert not bystander.notifications


async def test_the_last_subscriber_leaving_stops_the_watch() -> None:
    app, watching = make_server()
    async with connect(app) as first:
        async with connect(app) as second:
            await first.request("resources/subscribe", {"uri": "mem://items/2"})
            await second.request("resources/subscribe", {"uri": "mem://items/2"})
            await first.request("resources/unsubscribe", {"uri": "mem://items/2"})
            assert watching == ["2"]
        await anyio.sleep(0.01)
        assert watching == []  # the second disconnected without unsubscribing


async def test_subscribing_twice_runs_one_watch() -> None:
    app, watching = make_server()
    async with connect(app) as client:
        await client.request("resources/subscribe", {"uri": "mem://items/3"})
        await client.request("resources/subscribe", {"uri": "mem://items/3"})
        assert watching == ["3"]
        await client.request("resources/unsubscribe", {"uri": "mem://items/3"})
        await anyio.sleep(0.01)
        assert watching == []


async def test_a_client_watches_a_bounded_number_of_resources() -> None:
    app, watching = make_server()
    async with connect(app) as client:
        for n in range(MAX_SUBSCRIPTIONS):
            await client.request("resources/subscribe", {"uri": f"mem://items/{n}"})
        await client.request("resources/subscribe", {"uri": "mem://items/0"})  # held already
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": "mem://items/more"})
        assert refused.value.code == -32602
        assert "unsubscribe from some first" in refused.value.message
        assert len(watching) == MAX_SUBSCRIPTIONS
        await client.request("resources/unsubscribe", {"uri": "mem://items/0"})
        assert await client.request("resources/subscribe", {"uri": "mem://items/more"}) == {}


async def test_the_server_watches_a_bounded_number_of_resources_for_all_subscribers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One client here; over HTTP many sessions share the server, and over one connection
    # each listen stream is a subscriber of its own (see test_modern).
    monkeypatch.setattr(runtime, "MAX_WATCHES", 2)
    app, watching = make_server()
    async with connect(app) as client:
        for n in range(2):
            await client.request("resources/subscribe", {"uri": f"mem://items/{n}"})
        await client.request("resources/subscribe", {"uri": "mem://items/0"})  # watched already
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": "mem://items/2"})
        assert refused.value.code == -32602
        assert "The server watches 2 resources" in refused.value.message
        assert sorted(watching) == ["0", "1"]
        await client.request("resources/unsubscribe", {"uri": "mem://items/1"})
        assert await client.request("resources/subscribe", {"uri": "mem://items/2"}) == {}


async def test_subscribing_to_an_unknown_resource_is_refused() -> None:
    app, _ = make_server()
    async with connect(app) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": "mem://nope"})
        assert refused.value.code == -32002


async def test_file_changes_are_coalesced_into_one_update_per_burst(tmp_path: Path) -> None:
    watched = tmp_path / "watched.txt"
    watched.write_text("0")
    uri = f"file://{watched}"
    app, _ = make_server()
    async with connect(app) as client:
        await client.request("resources/subscribe", {"uri": uri})
        for n in range(5):
            watched.write_text(str(n))
        update = await client.wait_for_notification("notifications/resources/updated", timeout=5)
        assert update["params"] == {"uri": uri}
        await anyio.sleep(0.6)
        updates = [
            n for n in client.notifications if n["method"] == "notifications/resources/updated"
        ]
        assert len(updates) == 1
        (tmp_path / "other.txt").write_text("unrelated")
        await anyio.sleep(0.6)
        assert (
            len(
                [
                    n
                    for n in client.notifications
                    if n["method"] == "notifications/resources/updated"
                ]
            )
            == 1
        )


async def test_resource_list_changes_are_announced() -> None:
    app, _ = make_server()
    async with connect(app) as client:

        @app.resource("mem://new")
        async def new() -> str:
            return "new"

        await client.wait_for_notification("notifications/resources/list_changed")
        app.remove_resource("mem://new")
        with pytest.raises(RPCError):
            await client.request("resources/read", {"uri": "mem://new"})


def test_template_variables_must_match_parameters() -> None:
    app = Server("bad", "1")

    async def wrong(name: str) -> str:
        return name

    with pytest.raises(TypeError, match="template"):
        app.resource("mem://{id}")(wrong)


async def test_a_tool_error_outside_a_tool_keeps_its_message() -> None:
    # In a read: the resource is not there, and the message says why; in a prompt: the
    # arguments are wrong.
    app = Server("errors", "1")

    @app.resource("notes://{name}")
    async def note(name: str) -> str:
        raise ToolError(f"No note {name}: list_notes shows them")

    @app.prompt()
    async def ask(name: str) -> str:
        raise ToolError(f"No note {name} to ask about")

    async with connect(app) as client:
        with pytest.raises(RPCError) as read:
            await client.request("resources/read", {"uri": "notes://x"})
        with pytest.raises(RPCError) as get:
            await client.request("prompts/get", {"name": "ask", "arguments": {"name": "x"}})
    assert (read.value.code, read.value.message) == (-32002, "No note x: list_notes shows them")
    assert read.value.data == {"uri": "notes://x"}
    assert (get.value.code, get.value.message) == (-32602, "No note x to ask about")


async def test_a_change_right_after_subscribing_is_heard(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "first.txt", tmp_path / "b" / "second.txt"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("0")
    app, _ = make_server()
    async with connect(app) as client:
        await client.request("resources/subscribe", {"uri": f"file://{first}"})
        first.write_text("1")  # at once: subscribing was answered once the watch was in place
        update = await client.wait_for_notification("notifications/resources/updated", 5)
        assert update["params"] == {"uri": f"file://{first}"}
        # A second directory replaces the watcher: the first file is still followed.
        await client.request("resources/subscribe", {"uri": f"file://{second}"})
        second.write_text("1")
        first.write_text("2")
        both = {f"file://{first}", f"file://{second}"}
        # Wait for a message after which both were heard (the swap may tell one twice).
        await client.wait_for(lambda _: set(_updated(client.notifications)[1:]) == both)


async def test_a_change_while_the_watcher_is_replaced_is_heard(tmp_path: Path) -> None:
    files = FileWatcher()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    heard = anyio.Event()
    in_place = {"a": anyio.Event(), "b": anyio.Event()}

    def follow(name: str) -> Callable[[], Coroutine[Any, Any, None]]:
        async def callback() -> None:
            assert name == "a"
            heard.set()

        return partial(files.watch, [tmp_path / name], callback, in_place[name].set)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(files.run)
        task_group.start_soon(follow("a"))
        with anyio.fail_after(5):
            await in_place["a"].wait()
        task_group.start_soon(follow("b"))
        await anyio.lowlevel.checkpoint()  # the watch of b asked for a new watcher...
        (tmp_path / "a" / "new.txt").write_text("...and a changes before it is in place")
        with anyio.fail_after(5):
            await in_place["b"].wait()
            await heard.wait()
        task_group.cancel_scope.cancel()


@pytest.mark.parametrize("depth", [1, 3])
async def test_a_directory_deleted_and_made_again_is_watched_again(
    tmp_path: Path, depth: int
) -> None:
    # Depth 3: `rm -rf build && mkdir -p build/a/out`, the directory above gone too.
    top = tmp_path / "build"
    folder = top.joinpath(*["a", "out"][: depth - 1])
    folder.mkdir(parents=True)
    (folder / "f.txt").write_text("1")
    files = FileWatcher()
    calls = 0
    called = anyio.Event()

    async def callback() -> None:
        nonlocal calls, called
        calls += 1
        called.set()

    async def next_call(change: Callable[[], object]) -> None:
        nonlocal called
        called = anyio.Event()
        change()
        with anyio.fail_after(5):
            await called.wait()

    in_place = anyio.Event()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(files.run)
        task_group.start_soon(files.watch, [folder / "f.txt"], callback, in_place.set)
        with anyio.fail_after(5):
            await in_place.wait()
        await next_call(lambda: shutil.rmtree(top))
        # Made again with the file at once: the new watch may come after the write.
        await next_call(lambda: (folder.mkdir(parents=True), (folder / "f.txt").write_text("2")))
        await anyio.sleep(0.5)  # the new watch is in place, and the burst told
        await next_call(lambda: (folder / "f.txt").write_text("3"))
        task_group.cancel_scope.cancel()
    assert calls >= 3


async def test_a_burst_of_watches_in_many_directories_all_come_in_place(tmp_path: Path) -> None:
    # More directories than worker threads (40): each new directory replaces the watcher,
    # and one replaced before it was in place must not keep its thread.
    files = FileWatcher()
    in_place = [anyio.Event() for _ in range(60)]

    async def never() -> None:
        raise AssertionError("nothing changes")

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(files.run)
        for n, event in enumerate(in_place):
            (tmp_path / str(n)).mkdir()
            task_group.start_soon(files.watch, [tmp_path / str(n)], never, event.set)
            await anyio.sleep(0.005)
        with anyio.fail_after(10):
            for event in in_place:
                await event.wait()
        task_group.cancel_scope.cancel()


async def test_a_watcher_that_fails_to_start_is_logged_and_the_next_one_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_watch = watchfiles.watch
    calls: list[object] = []

    def failing_once(*paths: Path, **options: Any) -> Iterator[set[FileChange]]:
        calls.append(paths)
        if len(calls) == 1:  # on the first step, as watchfiles raises it
            raise RuntimeError("Error creating the watcher: inotify watch limit reached")
        yield from real_watch(*paths, **options)

    monkeypatch.setattr(watchfiles, "watch", failing_once)
    files = FileWatcher()
    heard = anyio.Event()

    async def callback() -> None:
        heard.set()

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(files.run)
        first, second = anyio.Event(), anyio.Event()
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        task_group.start_soon(files.watch, [tmp_path / "a"], callback, first.set)
        with anyio.fail_after(5):
            await first.wait()  # failed: as in place as it will get, nobody waits for ever
        task_group.start_soon(files.watch, [tmp_path / "b"], callback, second.set)
        with anyio.fail_after(5):
            await second.wait()
            (tmp_path / "b" / "new.txt").write_text("seen")
            await heard.wait()
        task_group.cancel_scope.cancel()
    assert "Cannot watch" in caplog.text
    assert "inotify watch limit reached" in caplog.text


async def test_a_failing_callback_does_not_stop_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = FileWatcher()
    heard = anyio.Event()
    in_place = [anyio.Event(), anyio.Event()]

    async def failing() -> None:
        raise OSError(5, "Input/output error")

    async def working() -> None:
        heard.set()

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(files.run)
        task_group.start_soon(files.watch, [tmp_path], failing, in_place[0].set)
        task_group.start_soon(files.watch, [tmp_path], working, in_place[1].set)
        with anyio.fail_after(5):
            for event in in_place:
                await event.wait()
            (tmp_path / "new.txt").write_text("twice")
            await heard.wait()
            heard = anyio.Event()
            await anyio.sleep(0.5)  # the next burst
            (tmp_path / "new.txt").write_text("thrice")
            await heard.wait()
        task_group.cancel_scope.cancel()
    assert "Telling the subscribers of a change failed" in caplog.text


@pytest.mark.parametrize(("ends", "timeout", "warned"), [(False, 0.2, True), (True, 60, False)])
async def test_subscribing_waits_for_the_watch_only_a_while(
    ends: bool,
    timeout: float,
    warned: bool,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A watch that never says it is in place is waited for `timeout`; one that ends, not at all.
    monkeypatch.setattr(runtime, "WATCH_START_TIMEOUT", timeout)
    app = Server("watched", "1")

    @app.resource("mem://thing")
    async def thing() -> str:
        return "thing"

    @app.watch("mem://thing")
    async def watch_thing(changed: Changed) -> None:
        if not ends:
            await anyio.sleep_forever()

    async with connect(app) as client:
        with anyio.fail_after(5):
            assert await client.request("resources/subscribe", {"uri": "mem://thing"}) == {}
    assert ("did not call changed.in_place()" in caplog.text) == warned


async def test_a_cancelled_subscription_is_taken_back() -> None:
    app = Server("watched", "1")
    started, ended = anyio.Event(), anyio.Event()

    @app.resource("mem://slow")
    async def slow() -> str:
        return "slow"

    @app.watch("mem://slow")
    async def watch_slow(changed: Changed) -> None:
        started.set()
        try:
            await anyio.sleep_forever()  # never in place: subscribing waits
        finally:
            ended.set()

    async with connect(app) as client:
        subscribe = {"uri": "mem://slow"}
        client.send(
            {"jsonrpc": "2.0", "id": "s", "method": "resources/subscribe", "params": subscribe}
        )
        with anyio.fail_after(5):
            await started.wait()
            await client.notify("notifications/cancelled", {"requestId": "s"})
            await ended.wait()  # the watch of the one subscription, cancelled, ends
            assert await client.request("ping") == {}
        assert not [m for m in client.messages if (as_object(m) or {}).get("id") == "s"]


def _updated(notifications: list[dict[str, Any]]) -> list[str]:
    return [
        n["params"]["uri"]
        for n in notifications
        if n["method"] == "notifications/resources/updated"
    ]


async def test_resources_listed_per_client_are_read_through_their_template() -> None:
    app = Server("per-client", "1", page_size=2)

    @app.resource("mem://static", name="static")
    async def static() -> str:
        return "static"

    @app.resource("mem://doc/{+name}")
    async def doc(name: str) -> str:
        return f"doc {name}"

    @app.list_resources
    async def listed(ctx: Context) -> list[Resource]:
        return [Resource(uri=f"mem://doc/{n}", name=n) for n in ("a", "b/c")]

    async with connect(app) as client:
        first = await client.request("resources/list")
        second = await client.request("resources/list", {"cursor": first["nextCursor"]})
        (read,) = (await client.request("resources/read", {"uri": "mem://doc/b/c"}))["contents"]
    uris = [r["uri"] for r in first["resources"] + second["resources"]]
    assert uris == ["mem://static", "mem://doc/a", "mem://doc/b/c"]
    assert "nextCursor" not in second
    assert read["text"] == "doc b/c"


async def test_admit_refuses_one_client_before_any_watch_runs() -> None:
    app = Server("admitting", "1")
    runs: list[str] = []

    @app.resource("mem://doc/{name}")
    async def doc(name: str) -> str:
        return name

    async def admit(ctx: Context, name: str) -> None:
        if name == "private":
            raise ResourceNotFound(f"mem://doc/{name}", f"{name} is not for this client")

    @app.watch("mem://doc/{name}", admit=admit)
    async def watch_doc(name: str, changed: Changed) -> None:
        runs.append(name)
        changed.in_place()
        await anyio.sleep_forever()

    async with connect(app) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": "mem://doc/private"})
        await client.request("resources/subscribe", {"uri": "mem://doc/public"})
    assert (refused.value.code, refused.value.message) == (-32002, "private is not for this client")
    assert runs == ["public"]


async def test_a_watch_that_refuses_its_uri_refuses_the_subscription(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Refusing before it is in place answers every waiting subscribe with the error and
    # drops the subscription; after it is in place, the error is only logged.
    app = Server("refusing", "1")
    runs: list[str] = []
    gate = anyio.Event()  # the first refusal waits until both subscribers wait

    @app.resource("mem://doc/{name}")
    async def doc(name: str) -> str:
        return name

    @app.watch("mem://doc/{name}")
    async def watch_doc(name: str, changed: Changed) -> None:
        runs.append(name)
        await gate.wait()
        if name == "late":
            changed.in_place()
        raise ResourceNotFound(f"mem://doc/{name}")

    async with connect(app) as client:
        refusals: list[int] = []

        async def subscribe() -> None:
            with pytest.raises(RPCError) as refused:
                await client.request("resources/subscribe", {"uri": "mem://doc/gone"})
            refusals.append(refused.value.code)

        async with anyio.create_task_group() as task_group:  # two requests wait for one watch
            task_group.start_soon(subscribe)
            task_group.start_soon(subscribe)
            await anyio.wait_all_tasks_blocked()
            gate.set()
        await subscribe()  # dropped the first time: the watch runs again
        assert await client.request("resources/subscribe", {"uri": "mem://doc/late"}) == {}
    assert refusals == [-32002, -32002, -32002]
    assert runs == ["gone", "gone", "late"]
    assert "Watch for mem://doc/late failed" in caplog.text
