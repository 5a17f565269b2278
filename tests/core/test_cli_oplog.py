"""The operator's start-up line, and what a request trace shows of a request."""

import logging

import pytest

from mcpkit import Server, oplog


def start_lines(caplog: pytest.LogCaptureFixture, server: Server) -> list[tuple[int, str]]:
    with caplog.at_level(logging.DEBUG):  # what the handler keeps; the operator chose warning
        oplog.log_start(server, "stdio", logging.WARNING)
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mcpkit.start"]


def test_the_start_up_line_names_server_transport_and_places(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = oplog.describe(
        Server("demo", "1.0"), ["/srv/a (read-write)", "/srv/b (read-only)"], roots="narrow"
    )
    assert start_lines(caplog, server) == [
        (
            logging.INFO,
            "demo 1.0 on stdio; allowed: /srv/a (read-write), /srv/b (read-only);"
            " client roots: narrow",
        )
    ]


@pytest.mark.parametrize("roots", [None, "ignore", "intersect"])
def test_a_configuration_that_gives_nothing_is_warned_about(
    caplog: pytest.LogCaptureFixture, roots: str | None
) -> None:
    server = oplog.describe(Server("demo", "1.0"), [], roots=roots)
    lines = start_lines(caplog, server)
    assert lines[1][0] == logging.WARNING
    assert "gives the model nothing" in lines[1][1]


def test_no_places_but_narrowing_roots_is_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    server = oplog.describe(Server("demo", "1.0"), [], roots="narrow")
    assert [level for level, _ in start_lines(caplog, server)] == [logging.INFO]


def test_a_server_that_describes_nothing_gets_a_plain_start_up_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert start_lines(caplog, Server("demo", "1.0")) == [(logging.INFO, "demo 1.0 on stdio")]


def test_a_request_label_previews_arguments_only() -> None:
    secret = "x" * 500
    message = {"method": "tools/call", "params": {"name": "write_file", "arguments": {"c": secret}}}
    label = oplog.label(message)
    assert label.startswith('tools/call write_file {"c":"xxx')
    assert len(label) < 100
