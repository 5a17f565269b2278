"""Secure by default: DNS-rebinding defence, CORS only when allowed, bearer tokens, binding."""

import argparse
from pathlib import Path

import pytest

from httpapp.mcphttp import request, serving
from mcpkit import cli
from mcpkit.http import StaticToken
from mcpkit.http.asgi import Request


async def test_a_foreign_host_is_421_on_every_endpoint(tmp_path: Path) -> None:
    async with serving(tmp_path, legacy_sse=True) as served:
        evil = {"host": "evil.example.com"}
        statuses = [
            (
                await served.http.post(
                    served.url, json=request(1, "ping"), headers={**served.headers(), **evil}
                )
            ).status_code,
            (
                await served.http.get(
                    f"{served.base}/sse", headers={"accept": "text/event-stream", **evil}
                )
            ).status_code,
            (
                await served.http.post(
                    f"{served.base}/messages?session_id=x", json={}, headers=evil
                )
            ).status_code,
        ]
        rebound = {"host": f"localhost:{served.base.rsplit(':', 1)[1]}"}
        own_name = await served.http.post(
            served.url, json=request(1, "ping"), headers={**served.headers(), **rebound}
        )
    assert statuses == [421, 421, 421]
    assert own_name.status_code == 400  # let in: no session, but past the guard


async def test_a_foreign_origin_is_403_and_gets_no_cors(tmp_path: Path) -> None:
    async with serving(tmp_path, legacy_sse=True) as served:
        evil = {"origin": "http://evil.example.com"}
        post = await served.http.post(
            served.url, json=request(1, "ping"), headers={**served.headers(), **evil}
        )
        sse = await served.http.get(
            f"{served.base}/sse", headers={"accept": "text/event-stream", **evil}
        )
        preflight = await served.http.options(served.url, headers=evil)
        own = await served.http.post(
            served.url, json=request(1, "ping"), headers={**served.headers(), "origin": served.base}
        )
    assert (post.status_code, sse.status_code, preflight.status_code) == (403, 403, 403)
    assert "access-control-allow-origin" not in post.headers
    assert own.status_code == 400  # its own origin passes the guard (then lacks a session)
    assert "access-control-allow-origin" not in own.headers  # and still gets no CORS


async def test_an_allowed_origin_gets_cors(tmp_path: Path) -> None:
    app_origin = "https://app.example"
    async with serving(tmp_path, allowed_origins=[app_origin]) as served:
        asking = "content-type, Mcp-Param-Region, mcp-param-bad name, x-other"
        preflight = await served.http.options(
            served.url, headers={"origin": app_origin, "access-control-request-headers": asking}
        )
        session = await served.initialize()
        answered = await served.post(request(1, "ping"), session, origin=app_origin)
    assert preflight.status_code == 204
    allowed = {
        name.strip() for name in preflight.headers["access-control-allow-headers"].split(",")
    }
    # 2026-07-28 clients must send mcp-method and mcp-name: a browser asks first.
    assert {"mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"} <= allowed
    # And the headers of tool arguments (Mcp-Param-*) it asks for: a browser sent none.
    assert "mcp-param-region" in allowed
    assert not {"mcp-param-bad name", "x-other"} & allowed
    assert answered.status_code == 200
    assert answered.headers["access-control-allow-origin"] == app_origin
    assert "mcp-session-id" in answered.headers["access-control-expose-headers"]


async def test_a_bearer_token_is_required(tmp_path: Path) -> None:
    async with serving(tmp_path, auth=StaticToken("s3cret"), legacy_sse=True) as served:
        missing = await served.post(request(1, "ping"))
        wrong = await served.post(request(1, "ping"), authorization="Bearer nope")
        sse = await served.http.get(f"{served.base}/sse", headers={"accept": "text/event-stream"})
        served.http.headers["authorization"] = "Bearer s3cret"
        session = await served.initialize()
        answered = await served.post(request(2, "ping"), session)
    assert (missing.status_code, wrong.status_code, sse.status_code) == (401, 401, 401)
    assert missing.headers["www-authenticate"] == "Bearer"
    assert answered.status_code == 200


class _TwoUsers:
    """Tokens "alice" and "bob", each its own principal."""

    async def authenticate(self, request: Request) -> str:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if token not in ("alice", "bob"):
            from mcpkit.http import Unauthorized

            raise Unauthorized(401, "Unauthorized", "Bearer")
        return token

    def well_known(self, request: Request) -> None:
        return None


async def test_a_session_belongs_to_its_principal(tmp_path: Path) -> None:
    async with serving(tmp_path, auth=_TwoUsers()) as served:
        served.http.headers["authorization"] = "Bearer alice"
        session = await served.initialize()
        as_bob = await served.post(request(1, "ping"), session, authorization="Bearer bob")
        as_alice = await served.post(request(2, "ping"), session)
    assert as_bob.status_code == 404  # indistinguishable from a session that does not exist
    assert as_alice.status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "::"])
def test_binding_beyond_loopback_needs_a_token(
    host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="mcp-x")
    with pytest.raises(SystemExit) as exit_info:
        cli.parse(parser, ["--transport", "http", "--host", host])
    assert exit_info.value.code == 2
    assert "--auth-token" in capsys.readouterr().err
    args = cli.parse(
        argparse.ArgumentParser(), ["--transport", "http", "--host", host, "--auth-token", "t"]
    )
    assert args.http_config.auth is not None


@pytest.mark.parametrize("token", ["pässwörd", "two words", " padded"])
def test_a_token_no_header_could_carry_is_refused_at_start(
    token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Accepted, it failed every request: headers arrive as Latin-1, compared as UTF-8.
    with pytest.raises(SystemExit) as exit_info:
        cli.parse(argparse.ArgumentParser(), ["--transport", "http", "--auth-token", token])
    assert exit_info.value.code == 2
    assert "must be a bearer token" in capsys.readouterr().err


def test_loopback_needs_no_token() -> None:
    args = cli.parse(argparse.ArgumentParser(), ["--transport", "http+sse"])
    config = args.http_config
    assert (config.host, config.auth, config.streamable, config.legacy_sse) == (
        "127.0.0.1",
        None,
        True,
        True,
    )
