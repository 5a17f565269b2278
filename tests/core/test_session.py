"""The I/O-free lifecycle rules, table-driven and synchronous."""

import pytest

from mcpkit.errors import InvalidParams, InvalidRequest, ProtocolError
from mcpkit.modern import VERSION_KEY
from mcpkit.session import Phase, Session, before_initialize
from mcpkit.versions import negotiate


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),  # the stateless era has no handshake
        ("2099-01-01", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        (None, "2025-11-25"),
        (20250618, "2025-11-25"),
    ],
)
def test_negotiation_echoes_supported_versions_else_answers_latest(
    requested: object, answered: str
) -> None:
    assert negotiate(requested) == answered


@pytest.mark.parametrize(
    ("phase", "method", "refusal"),
    [
        (Phase.AWAITING_INITIALIZE, "ping", None),
        (Phase.AWAITING_INITIALIZE, "initialize", None),
        # Neither after initialize nor stateless (the connection serves those first).
        (Phase.AWAITING_INITIALIZE, "tools/list", InvalidParams),
        (Phase.AWAITING_INITIALIZE, "logging/setLevel", InvalidParams),
        (Phase.INITIALIZING, "tools/list", None),
        (Phase.INITIALIZING, "initialize", InvalidRequest),
        (Phase.READY, "ping", None),
        (Phase.READY, "tools/call", None),
        (Phase.READY, "initialize", InvalidRequest),
    ],
)
def test_what_each_phase_allows(
    phase: Phase, method: str, refusal: type[ProtocolError] | None
) -> None:
    session = Session()
    session.phase = phase
    if refusal is None:
        session.check_request(method)
    else:
        with pytest.raises(refusal):
            session.check_request(method)


def test_a_request_before_initialize_is_told_what_either_era_sends() -> None:
    refusal = before_initialize("tools/call")
    assert refusal.code == -32602
    assert f'_meta["{VERSION_KEY}"]' in refusal.message
    assert "tools/call" in refusal.message
    assert "send initialize first" in refusal.message


def test_initialize_then_initialized_reaches_ready() -> None:
    session = Session()
    session.initialized()  # too early: ignored
    assert session.phase is Phase.AWAITING_INITIALIZE
    version = session.initialize(
        {
            "protocolVersion": "2025-03-26",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "c"},
        }
    )
    assert (version, session.phase) == ("2025-03-26", Phase.INITIALIZING)
    session.initialized()
    assert session.phase is Phase.READY
    assert session.client_supports("sampling")
    assert not session.client_supports("roots")


@pytest.mark.parametrize("params", [{"capabilities": []}, {"clientInfo": "me"}])
def test_initialize_rejects_malformed_params(params: dict[str, object]) -> None:
    with pytest.raises(InvalidParams):
        Session().initialize(params)


@pytest.mark.parametrize(
    ("version", "batches"),
    [("2024-11-05", False), ("2025-03-26", True), ("2025-06-18", False), ("2025-11-25", False)],
)
def test_batches_only_in_2025_03_26(version: str, batches: bool) -> None:
    session = Session()
    assert not session.accepts_batches
    session.initialize({"protocolVersion": version})
    assert session.accepts_batches is batches


def test_log_level_threshold() -> None:
    session = Session()
    assert session.wants_log("info")
    assert not session.wants_log("debug")
    session.set_log_level("error")
    assert session.wants_log("emergency")
    assert not session.wants_log("warning")
    with pytest.raises(InvalidParams):
        session.set_log_level("verbose")
    assert session.log_level == "error"


def test_capability_paths() -> None:
    session = Session()
    session.initialize(
        {"capabilities": {"elicitation": {"form": {}}, "roots": {"listChanged": True}}}
    )
    assert session.client_supports("elicitation", "form")
    assert not session.client_supports("elicitation", "url")
    assert session.client_supports("roots", "listChanged")


def test_server_request_ids_are_fresh() -> None:
    session = Session()
    assert len({session.next_request_id() for _ in range(100)}) == 100
