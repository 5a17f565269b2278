"""The OAuth 2.1 resource server, end to end.

mcp-everything is served by the real `HttpApp` under uvicorn on 127.0.0.1, protected by an
`OAuthResourceServer` whose introspection requests go, through httpx, to a stub
authorization server: a small ASGI app, also under uvicorn on 127.0.0.1, that checks this
server's client credentials and answers the claims each test gives its tokens.
"""

import argparse
import base64
import contextlib
import json
import logging
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote_plus

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit import cli
from mcpkit.http.app import HttpApp
from mcpkit.http.asgi import ASGIApp, Receive, Scope, Send
from mcpkit.http.config import HttpConfig
from mcpkit.http.oauth import (
    MAX_INTROSPECTIONS,
    WELL_KNOWN,
    Grant,
    GrantCache,
    OAuthResourceServer,
    canonical_uri,
)
from mcpkit_everything.server import build_server

CLIENT_ID = "mcp-everything"
CLIENT_SECRET = "s3cret:with/odd+chars"  # must be form-encoded before Basic (RFC 6749 2.3.1)
SCOPE = "mcp:tools"
VERSION = "2025-11-25"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
Claims = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn runs on asyncio only


# The stub authorization server and the servers under uvicorn --------------------------------


@dataclass
class StubAuthorizationServer:
    """An introspection endpoint (RFC 7662) at /introspect; unknown tokens are inactive."""

    tokens: dict[str, Claims] = field(default_factory=dict[str, Claims])
    calls: int = 0
    asking: int = 0
    most_at_once: int = 0
    broken: tuple[int, bytes] | None = None
    """Answer every request with this status and body instead."""
    delay: float = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no lifespan to speak of
        self.calls += 1
        self.asking += 1
        self.most_at_once = max(self.most_at_once, self.asking)
        body = b""
        more = True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        status, answer = self.broken or self._answer(scope, body)
        await anyio.sleep(self.delay)
        self.asking -= 1
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    def _answer(self, scope: Scope, body: bytes) -> tuple[int, bytes]:
        headers: dict[bytes, bytes] = dict(scope["headers"])
        form = headers.get(b"content-type") == b"application/x-www-form-urlencoded"
        if (scope["method"], scope["path"]) != ("POST", "/introspect") or not form:
            return 400, b'{"error":"invalid_request"}'
        if client_credentials(headers.get(b"authorization", b"")) != (CLIENT_ID, CLIENT_SECRET):
            return 401, b'{"error":"invalid_client"}'
        (token,) = parse_qs(body.decode())["token"]
        return 200, json.dumps(self.tokens.get(token, {"active": False})).encode()


def client_credentials(header: bytes) -> tuple[str, str] | None:
    """Decode HTTP Basic client credentials as RFC 6749 section 2.3.1 has them encoded."""
    scheme, _, encoded = header.decode().partition(" ")
    if scheme != "Basic":
        return None
    client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
    return unquote_plus(client_id), unquote_plus(secret)


def loopback_socket() -> socket.socket:
    """A TCP socket bound to a free port of 127.0.0.1, for uvicorn to listen on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def base_url(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


@asynccontextmanager
async def serving(*apps: tuple[ASGIApp, socket.socket]) -> AsyncGenerator[None]:
    """Serve each app with uvicorn on its socket while the block runs; stop them together."""
    servers = [
        uvicorn.Server(
            uvicorn.Config(app, log_config=None, access_log=False, timeout_graceful_shutdown=1)
        )
        for app, _ in apps
    ]
    with contextlib.ExitStack() as sockets:
        for _, sock in apps:
            sockets.enter_context(sock)
        async with anyio.create_task_group() as task_group:
            for server, (_, sock) in zip(servers, apps, strict=True):
                task_group.start_soon(server.serve, [sock])
            for _ in range(500):  # uvicorn has no event for "started": look, for 5 s at most
                if all(server.started for server in servers):
                    break
                await anyio.sleep(0.01)
            else:
                pytest.fail("uvicorn did not start")
            try:
                yield
            finally:
                for server in servers:
                    server.should_exit = True


@dataclass
class Protected:
    """mcp-everything behind OAuth, and the authorization server it asks."""

    url: str
    """The MCP endpoint, which is also the resource URI."""
    issuer: str
    authorization_server: StubAuthorizationServer
    client: httpx.AsyncClient

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    def token(self, sub: str = "alice", **claims: Any) -> str:
        """Register a fresh token: valid for this server unless `claims` say otherwise."""
        token = f"token-{secrets.token_urlsafe(24)}"
        self.authorization_server.tokens[token] = {
            "active": True,
            "aud": self.url,
            "scope": SCOPE,
            "sub": sub,
            "client_id": "client-app",
            "exp": time.time() + 3600,
            **claims,
        }
        return token

    async def post(
        self, token: str | None, message: dict[str, Any], session: str | None = None
    ) -> httpx.Response:
        """POST one JSON-RPC message to the MCP endpoint."""
        headers = dict(MCP_HEADERS)
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        if session is not None:
            headers |= {"mcp-session-id": session, "mcp-protocol-version": VERSION}
        return await self.client.post(self.url, json=message, headers=headers)

    async def initialize(self, token: str) -> str:
        """Open a session with `token`; return its id."""
        response = await self.post(token, INITIALIZE)
        assert response.status_code == 200, response.text
        assert response.json()["result"]["protocolVersion"] == VERSION
        session = response.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(token, initialized, session)).status_code == 202
        return session


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test-oauth", "version": "0"},
    },
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
ECHO = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "hello"}},
}


@asynccontextmanager
async def protected(
    tmp_path: Path,
    *,
    introspection_url: str | None = None,
    client_secret: str = CLIENT_SECRET,
    timeout: float = 5.0,
) -> AsyncGenerator[Protected]:
    """Serve mcp-everything behind OAuth; introspection goes to a fresh stub by default."""
    stub = StubAuthorizationServer()
    stub_socket, mcp_socket = loopback_socket(), loopback_socket()
    port = mcp_socket.getsockname()[1]
    auth = OAuthResourceServer(
        resource=f"{base_url(mcp_socket)}/mcp",
        issuer=base_url(stub_socket),
        introspection_url=introspection_url or f"{base_url(stub_socket)}/introspect",
        client_id=CLIENT_ID,
        client_secret=client_secret,
        scopes=[SCOPE],
        timeout=timeout,
    )
    app = HttpApp(build_server(tmp_path / "w.txt"), HttpConfig(port=port, auth=auth))
    async with (
        serving((stub, stub_socket), (app, mcp_socket)),
        httpx.AsyncClient(timeout=10) as client,
    ):
        yield Protected(auth.resource, auth.issuer, stub, client)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncGenerator[Protected]:
    async with protected(tmp_path) as served:
        yield served


# Discovery ----------------------------------------------------------------------------------


async def test_a_request_without_token_gets_the_discovery_challenge(server: Protected) -> None:
    for headers in ({}, {"authorization": "Basic dXNlcjpwYXNz"}, {"authorization": "Bearer"}):
        response = await server.client.post(
            server.url, json=INITIALIZE, headers=MCP_HEADERS | headers
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{server.base}{WELL_KNOWN}/mcp", scope="{SCOPE}"'
        )
        assert "error" not in response.headers["www-authenticate"]  # RFC 6750 section 3.1
    assert server.authorization_server.calls == 0


async def test_the_metadata_is_served_at_the_root_and_path_suffixed(server: Protected) -> None:
    expected = {
        "resource": server.url,
        "authorization_servers": [server.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [SCOPE],
    }
    for path in (f"{WELL_KNOWN}/mcp", WELL_KNOWN):
        response = await server.client.get(server.base + path)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.json() == expected
    assert (await server.client.post(server.base + WELL_KNOWN)).status_code == 405
    assert (await server.client.get(f"{server.base}{WELL_KNOWN}/other")).status_code == 404


# Valid tokens -------------------------------------------------------------------------------


async def test_a_valid_token_initializes_and_calls_a_tool(server: Protected) -> None:
    token = server.token()
    session = await server.initialize(token)
    response = await server.post(token, ECHO, session)
    assert response.status_code == 200
    assert response.json()["result"]["content"] == [{"type": "text", "text": "hello"}]


async def test_an_audience_matches_in_canonical_form(server: Protected) -> None:
    audience = ["https://elsewhere.example/mcp", server.url.replace("http:", "HTTP:") + "/"]
    response = await server.post(server.token(aud=audience), INITIALIZE)
    assert response.status_code == 200


# Tokens refused -----------------------------------------------------------------------------

REFUSED: dict[str, Callable[[str], Claims]] = {
    "inactive": lambda resource: {"active": False},
    "expired": lambda resource: {"exp": time.time() - 5},
    "other audience": lambda resource: {"aud": "https://elsewhere.example/mcp"},
    "other path": lambda resource: {"aud": resource.removesuffix("/mcp") + "/other"},
    "audience list without us": lambda resource: {"aud": ["https://a.example", "b"]},
    "no audience": lambda resource: {"aud": None},
    "no subject or client": lambda resource: {"sub": None, "client_id": None},
}


@pytest.mark.parametrize("claims", REFUSED.values(), ids=REFUSED.keys())
async def test_an_invalid_token_gets_401(
    server: Protected, claims: Callable[[str], Claims]
) -> None:
    response = await server.post(server.token(**claims(server.url)), INITIALIZE)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", error_description="')
    assert f'resource_metadata="{server.base}{WELL_KNOWN}/mcp"' in challenge
    assert "mcp-session-id" not in response.headers


async def test_an_unknown_token_gets_401(server: Protected) -> None:
    response = await server.post("never-issued", INITIALIZE)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert server.authorization_server.calls == 1


async def test_a_token_without_the_required_scope_gets_403(server: Protected) -> None:
    response = await server.post(server.token(scope="mcp:read other"), INITIALIZE)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope", ')
    assert challenge.endswith(f'scope="{SCOPE}"')
    assert (await server.post(server.token(scope=None), INITIALIZE)).status_code == 403
    more = server.token(scope=f"mcp:read {SCOPE} other")
    assert (await server.post(more, INITIALIZE)).status_code == 200


async def test_a_session_belongs_to_the_principal_that_opened_it(server: Protected) -> None:
    alice = server.token("alice")
    session = await server.initialize(alice)
    for intruder in (server.token("bob"), server.token("alice", client_id="other-client")):
        response = await server.post(intruder, LIST_TOOLS, session)
        assert response.status_code == 404
    assert (await server.post(alice, LIST_TOOLS, session)).status_code == 200
    # Another token of the same user and client is the same principal.
    assert (await server.post(server.token("alice"), LIST_TOOLS, session)).status_code == 200


async def test_a_subject_beyond_ascii_keeps_its_session(server: Protected) -> None:
    token = server.token("zoë")
    session = await server.initialize(token)
    assert (await server.post(token, LIST_TOOLS, session)).status_code == 200
    intruder = server.token("zoe")
    assert (await server.post(intruder, LIST_TOOLS, session)).status_code == 404


# The cache ----------------------------------------------------------------------------------


async def test_a_cached_token_does_not_ask_the_authorization_server_again(
    server: Protected,
) -> None:
    token = server.token()
    session = await server.initialize(token)
    for _ in range(3):
        assert (await server.post(token, LIST_TOOLS, session)).status_code == 200
    assert server.authorization_server.calls == 1
    assert (await server.post(server.token(), INITIALIZE)).status_code == 200
    assert server.authorization_server.calls == 2


async def test_a_token_is_not_trusted_past_its_expiry(server: Protected) -> None:
    expiry = time.time() + 1.5
    token = server.token(exp=expiry)
    assert (await server.post(token, INITIALIZE)).status_code == 200
    await anyio.sleep(expiry - time.time() + 0.05)
    response = await server.post(token, INITIALIZE)
    assert response.status_code == 401
    assert "expired" in response.headers["www-authenticate"]
    assert server.authorization_server.calls == 2


async def test_a_bad_token_sent_again_and_again_is_introspected_once(server: Protected) -> None:
    # Refusals were not kept: each request with the same bad token was an introspection.
    server.authorization_server.delay = 0.2  # so that the first ones arrive together
    async with anyio.create_task_group() as task_group:
        for _ in range(20):
            task_group.start_soon(server.post, "never-issued", INITIALIZE)
    response = await server.post("never-issued", INITIALIZE)
    assert response.status_code == 401
    assert "not active" in response.headers["www-authenticate"]
    assert server.authorization_server.calls == 1


async def test_introspections_at_once_are_bounded(server: Protected) -> None:
    server.authorization_server.delay = 0.3
    answers: list[int] = []

    async def post(token: str) -> None:
        answers.append((await server.post(token, INITIALIZE)).status_code)

    async with anyio.create_task_group() as task_group:
        for n in range(3 * MAX_INTROSPECTIONS):
            task_group.start_soon(post, f"bad-{n}")
    assert answers == [401] * 3 * MAX_INTROSPECTIONS
    assert 1 < server.authorization_server.most_at_once <= MAX_INTROSPECTIONS


def test_the_cache_is_bounded_and_forgets_expired_grants() -> None:
    cache = GrantCache(2)
    later = time.monotonic() + 60
    for key in (b"a", b"b", b"c"):
        cache.put(key, Grant(key.decode(), frozenset(), later))
    assert (len(cache), cache.get(b"a")) == (2, None)
    assert cache.get(b"b") is not None  # now the most recently used: "c" goes next
    cache.put(b"d", Grant("d", frozenset(), later))
    assert (cache.get(b"c"), cache.get(b"b") is not None) == (None, True)
    cache.put(b"e", Grant("e", frozenset(), time.monotonic() - 1))
    assert cache.get(b"e") is None
    assert len(cache) == 1  # the expired grant went when it was looked up


# An authorization server that fails ---------------------------------------------------------


async def test_an_unreachable_authorization_server_refuses_with_503(tmp_path: Path) -> None:
    closed = loopback_socket()
    nowhere = f"{base_url(closed)}/introspect"
    closed.close()
    async with protected(tmp_path, introspection_url=nowhere) as server:
        response = await server.post(server.token(), INITIALIZE)
    assert response.status_code == 503
    assert "www-authenticate" not in response.headers
    assert "authorization server" in response.json()["error"]["message"]


BROKEN = {
    "server error": (500, b'{"active": true}'),
    "not JSON": (200, b"<html>login</html>"),
    "active is no boolean": (200, b'{"active": "true"}'),
    "no active member": (200, b'{"sub": "alice"}'),
    "a JSON array": (200, b"[]"),
    "too long": (200, b'{"active": false}' + b" " * (70 << 10)),
}


@pytest.mark.parametrize("answer", BROKEN.values(), ids=BROKEN.keys())
async def test_a_garbled_answer_refuses_with_503(
    server: Protected, answer: tuple[int, bytes]
) -> None:
    token = server.token()
    server.authorization_server.broken = answer
    response = await server.post(token, INITIALIZE)
    assert response.status_code == 503
    server.authorization_server.broken = None  # the token is good: the refusal was not cached
    assert (await server.post(token, INITIALIZE)).status_code == 200


async def test_a_slow_authorization_server_refuses_with_503(tmp_path: Path) -> None:
    async with protected(tmp_path, timeout=0.3) as server:
        server.authorization_server.delay = 2.0  # past the timeout, however loaded the machine
        started = time.monotonic()
        response = await server.post(server.token(), INITIALIZE)
        assert response.status_code == 503
        assert time.monotonic() - started < 1.5


async def test_wrong_client_credentials_refuse_with_503(tmp_path: Path) -> None:
    async with protected(tmp_path, client_secret="s3cret:with/odd chars") as server:
        response = await server.post(server.token(), INITIALIZE)
        assert response.status_code == 503
        assert server.authorization_server.calls == 1


# Secrecy ------------------------------------------------------------------------------------


async def test_the_token_never_reaches_the_logs(
    server: Protected, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tokens = [server.token(), server.token(active=False), server.token(scope="other")]
    responses = [await server.post(token, INITIALIZE) for token in tokens]
    assert [response.status_code for response in responses] == [200, 401, 403]
    server.authorization_server.broken = (500, b"{}")
    broken = server.token()
    assert (await server.post(broken, INITIALIZE)).status_code == 503
    # The introspection requests and their failure were logged: the capture sees them.
    assert any(record.name.startswith("httpx") for record in caplog.records)
    assert "token introspection at" in caplog.text
    for token in [*tokens, broken]:
        assert token not in caplog.text
        assert all(token not in repr(record.args) for record in caplog.records)
        for response in responses:
            assert token not in response.text
            assert token not in str(response.headers)


# The official SDK as the client -------------------------------------------------------------


async def test_the_official_client_connects_with_its_token(server: Protected) -> None:
    headers = {"authorization": f"Bearer {server.token()}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=10) as http_client,
        streamable_http_client(server.url, http_client=http_client) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(10):
            await session.initialize()
            tools = await session.list_tools()
    assert "echo" in {tool.name for tool in tools.tools}
    assert server.authorization_server.calls == 1


# Configuration ------------------------------------------------------------------------------

OAUTH_ARGS = [
    "--transport=http",
    "--oauth-issuer=https://as.example",
    "--oauth-introspection-url=https://as.example/introspect",
    "--oauth-client-id=mcp",
]


def parse(argv: list[str]) -> argparse.Namespace:
    return cli.parse(argparse.ArgumentParser(prog="mcp-test"), argv)


def test_the_options_configure_oauth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_OAUTH_CLIENT_SECRET", "from-the-environment")
    monkeypatch.setenv("MCPKIT_OAUTH_SCOPES", "mcp:read, mcp:write")
    config: HttpConfig = parse([*OAUTH_ARGS, "--port=9000", "--oauth-scope=mcp:admin"]).http_config
    auth = config.auth
    assert isinstance(auth, OAuthResourceServer)
    assert auth.resource == "http://127.0.0.1:9000/mcp"
    assert auth.issuer == "https://as.example"
    assert auth.scopes == ("mcp:read", "mcp:write", "mcp:admin")


def test_oauth_counts_as_authentication_off_loopback() -> None:
    argv = [*OAUTH_ARGS, "--oauth-client-secret=x", "--host=0.0.0.0"]
    auth = parse([*argv, "--resource-url=https://MCP.example.com:443/mcp/"]).http_config.auth
    assert isinstance(auth, OAuthResourceServer)
    assert auth.resource == "https://mcp.example.com/mcp"
    assert auth.metadata_url == f"https://mcp.example.com{WELL_KNOWN}/mcp"


BAD_OPTIONS = {
    "issuer alone": (
        ["--transport=http", "--oauth-issuer=https://as.example"],
        "--oauth-issuer needs --oauth-introspection-url",
    ),
    "scope alone": (
        ["--transport=http", "--oauth-scope=a"],
        "--oauth-scope needs --oauth-introspection-url",
    ),
    "no issuer": (
        [
            "--transport=http",
            "--oauth-introspection-url=https://as.example/i",
            "--oauth-client-id=c",
            "--oauth-client-secret=s",
        ],
        "needs --oauth-issuer",
    ),
    "no secret": ([*OAUTH_ARGS], "needs --oauth-client-secret"),
    "shared token too": (
        [*OAUTH_ARGS, "--oauth-client-secret=s", "--auth-token=t"],
        "exclude each other",
    ),
    "off loopback without resource": (
        [*OAUTH_ARGS, "--oauth-client-secret=s", "--host=10.0.0.5"],
        "needs --resource-url",
    ),
    "plain http issuer": (
        [*OAUTH_ARGS, "--oauth-client-secret=s", "--oauth-issuer=http://as.example"],
        "the issuer must be an https:// URL",
    ),
    "credentials in the URL": (
        [
            *OAUTH_ARGS,
            "--oauth-client-secret=s",
            "--oauth-introspection-url=https://u:p@as.example/i",
        ],
        "without user information",
    ),
    "plain http introspection": (
        [*OAUTH_ARGS, "--oauth-client-secret=s", "--oauth-introspection-url=http://as.example/i"],
        "the introspection URL must be an https:// URL",
    ),
    "bad scope": (
        [*OAUTH_ARGS, "--oauth-client-secret=s", '--oauth-scope=a"b'],
        "not a valid OAuth scope",
    ),
    "resource with query": (
        [*OAUTH_ARGS, "--oauth-client-secret=s", "--resource-url=https://x.example/mcp?a=1"],
        "the resource URL must be",
    ),
}


@pytest.mark.parametrize(("argv", "message"), BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_bad_oauth_options_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_httpx_loads_only_with_oauth() -> None:
    probe = "import sys, mcpkit.cli, mcpkit.http; print('httpx' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, check=True, text=True
    )
    assert result.stdout.strip() == "False"
    probe = "import sys, mcpkit.http.oauth; print('httpx' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, check=True, text=True
    )
    assert result.stdout.strip() == "True"


@pytest.mark.parametrize(
    ("uri", "canonical"),
    [
        ("HTTPS://Example.COM:443/mcp/", "https://example.com/mcp"),
        ("http://example.com:8080", "http://example.com:8080"),
        ("http://[::1]:80/mcp", "http://[::1]/mcp"),
        ("https://example.com/mcp?x=1", "https://example.com/mcp?x=1"),
        ("https://user@example.com/mcp", None),
        ("https://example.com/mcp#part", None),
        ("https://example.com:port/mcp", None),
        ("urn:example:mcp", None),
        ("/mcp", None),
    ],
)
def test_canonical_uri(uri: str, canonical: str | None) -> None:
    assert canonical_uri(uri) == canonical
