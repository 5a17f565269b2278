"""Places from roots: the operator's places, as each mode lets the client's roots narrow them."""

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from checked import connect
from mcpkit import Context, Server
from mcpkit.errors import ProtocolError
from mcpkit.places import MAX_ROOTS, Places, RootsMode, real_place


def make_server(tmp: Path, mode: RootsMode) -> Server:
    """A server whose lifespan provides the places: tmp/a read-write, tmp/b read-only."""
    operator = [
        real_place(str(tmp / "a"), read_only=False, source="command line"),
        real_place(str(tmp / "b"), read_only=True, source="command line"),
    ]

    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[Places]:
        resolve = partial(real_place, read_only=False, source="client roots")
        yield Places(operator, mode, resolve)

    app = Server("placed", "1", lifespan=lifespan)

    @app.tool()
    async def where(ctx: Context, places: Places) -> str:
        """Say which places this request may use."""
        allowed = await places.of(ctx)
        return " ".join(
            sorted(
                f"{Path(p.given).relative_to(tmp)}{':ro' if p.read_only else ''}" for p in allowed
            )
        )

    return app


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    for name in ("a/sub", "b/inner", "c"):
        (tmp_path / name).mkdir(parents=True)
    return tmp_path


async def where(tmp: Path, mode: RootsMode, roots: list[str] | None) -> str:
    """Call `where` as a client with `roots` (None: no roots capability)."""
    handlers: dict[str, Any] = {}
    if roots is not None:
        uris = [root if ":" in root else f"file://{tmp / root}" for root in roots]

        async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
            return {"roots": [{"uri": uri} for uri in uris]}

        handlers["roots/list"] = list_roots
    async with connect(make_server(tmp, mode), handlers=handlers) as client:
        result = await client.call_tool("where")
    return result["content"][0]["text"]


@pytest.mark.parametrize(
    ("mode", "roots", "allowed"),
    [
        ("narrow", None, "a b:ro"),  # no roots: the operator's places
        ("narrow", [], "a b:ro"),  # an empty list is no opinion either
        ("narrow", ["a/sub"], "a/sub"),
        ("narrow", ["."], "a b:ro"),  # a root above them all narrows nothing
        ("narrow", ["b/inner"], "b/inner:ro"),  # inside a read-only place: read-only
        ("narrow", ["c"], ""),  # outside every place: nothing, never c
        ("narrow", ["missing"], ""),  # a root that names nothing still narrows, to nothing
        ("narrow", ["https://example.com/"], ""),  # not a local file:// root
        ("intersect", None, ""),  # strictly the intersection: no roots, nothing
        ("intersect", ["a"], "a"),
        ("replace", ["c"], "c"),  # the operator handed the decision to the client
        ("replace", None, "a b:ro"),
        ("ignore", ["a/sub"], "a b:ro"),
    ],
)
async def test_each_mode_narrows_as_documented(
    tmp: Path, mode: RootsMode, roots: list[str] | None, allowed: str
) -> None:
    assert await where(tmp, mode, roots) == allowed


async def test_a_client_that_fails_to_give_roots_is_allowed_nothing(tmp: Path) -> None:
    # It counted as a client without roots: given every place, when it meant to narrow them.
    answers: list[Any] = [
        {"roots": "not a list"},
        {"roots": [{"uri": 5}]},
        {},
        ProtocolError("Method not found", code=-32601),
    ]

    async def broken(params: dict[str, Any]) -> dict[str, Any]:
        answer = answers[0]
        if isinstance(answer, ProtocolError):
            raise answer
        return answer

    for mode in ("narrow", "replace"):
        for answer in list(answers):
            answers[0] = answer
            async with connect(make_server(tmp, mode), handlers={"roots/list": broken}) as client:
                result = await client.call_tool("where")
            assert result.get("isError") is True, (mode, answer)
            assert "its answer to roots/list failed" in result["content"][0]["text"]


async def test_many_roots_are_taken_so_far_and_logged_in_a_line(
    tmp: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 300,000 roots took 10 s to resolve, logged a line each, and were remembered whole.
    after = [f"z-missing/{n:06}" for n in range(MAX_ROOTS + 1000)]  # by URI: after a, b
    before = [f"0-missing/{n:06}" for n in range(MAX_ROOTS + 1000)]  # before them
    with caplog.at_level(logging.WARNING, logger="mcpkit.places"):
        assert await where(tmp, "narrow", ["a/sub", *after]) == "a/sub"
        assert await where(tmp, "narrow", [*before, "b/inner"]) == ""  # not among the first
    ignoring = [r.getMessage() for r in caplog.records if "Ignoring" in r.getMessage()]
    assert len(ignoring) <= 4
    assert f"past the first {MAX_ROOTS}" in ignoring[0]


def test_dot_dot_after_a_link_is_where_the_kernel_goes(tmp_path: Path) -> None:
    for name in ("b/c", "b/x", "x"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "a").symlink_to(tmp_path / "b" / "c")
    place = real_place(f"{tmp_path}/a/../x", read_only=False, source="command line")
    assert place.path == place.given == str(tmp_path / "b" / "x")  # not tmp_path/x, by name
    plain = real_place(f"{tmp_path}/b/./x/", read_only=False, source="command line")
    assert plain.given == str(tmp_path / "b" / "x")
