"""The temporary files SQLite spills to: found, added up, and used only where they are."""

import tempfile
import threading
from pathlib import Path

import pytest

from mcpkit_sqlite import temporary
from mcpkit_sqlite.guard import Guard, GuardedConnection


def test_files_no_folder_names_are_added_up_and_named_ones_are_not(tmp_path: Path) -> None:
    before = temporary.temporary_bytes()
    with open(tmp_path / "named", "wb") as named, tempfile.TemporaryFile() as unnamed:
        named.write(b"n" * 3_000_000)
        named.flush()
        assert temporary.temporary_bytes() == before
        unnamed.write(b"u" * 2_000_000)
        unnamed.flush()
        assert before + 2_000_000 <= temporary.temporary_bytes() < before + 3_000_000
    assert temporary.temporary_bytes() == before


@pytest.mark.parametrize(("measurable", "store"), [(True, 0), (False, 2)])
def test_sorts_stay_in_memory_only_where_their_files_cannot_be_measured(
    monkeypatch: pytest.MonkeyPatch, measurable: bool, store: int
) -> None:
    # 0: SQLite's default (files); 2: memory, under the heap cap.
    monkeypatch.setattr(temporary, "MEASURABLE", measurable)
    connection = GuardedConnection(":memory:", guard=Guard(writes=False))
    try:
        connection.set_authorizer(None)  # which refuses every pragma that sets something
        assert connection.execute("PRAGMA temp_store").fetchone() == (store,)
    finally:
        connection.close()


def test_only_the_statements_running_past_the_cap_are_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(temporary, "INTERVAL", 0.001)
    watch = temporary.Watch(limit=50_000)
    ended, running = threading.Event(), threading.Event()
    with tempfile.TemporaryFile() as unnamed:
        with watch.running(ended.set):
            pass
        with watch.running(running.set):
            assert not running.wait(0.1)  # under the cap
            unnamed.write(b"u" * 100_000)
            unnamed.flush()
            assert running.wait(5)
    assert not ended.is_set()
