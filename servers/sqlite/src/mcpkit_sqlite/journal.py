"""The rollback journal a writer that stopped left beside a database: whether to undo it.

A connection that may write undoes such a journal before it reads. A journal may end by
naming a super-journal, the file a transaction over several databases kept their journals
in; once the journal is undone, SQLite deletes the super-journal unless another journal
still names it. A journal that came with a hostile file names any file the server may
delete, so the server never undoes one that names a super-journal. It makes none itself:
a statement cannot attach a second database.
"""

import os
import stat

from .errors import SqliteError

MAGIC = bytes.fromhex("d9d505f920a163d7")
"""How a journal's super-journal record ends, as the journal's last eight bytes."""


def check_journal(path: str) -> None:
    """Refuse a database whose rollback journal names a super-journal, or is no file.

    Raises:
        SqliteError: it does; nothing was changed.
    """
    journal = f"{path}-journal"
    try:  # without blocking on a FIFO (Windows has neither)
        descriptor = os.open(journal, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SqliteError(refused(journal, f"it cannot be read ({exc.strerror})")) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise SqliteError(refused(journal, "it is not a regular file"))
        with open(descriptor, "rb", buffering=0, closefd=False) as file:
            hot = file.read(1) not in (b"", b"\0")  # as SQLite tells a journal to undo
            file.seek(max(info.st_size - len(MAGIC), 0))
            tail = file.read(len(MAGIC))
    finally:
        os.close(descriptor)
    if hot and tail == MAGIC:
        raise SqliteError(refused(journal, "it names another file, which undoing it deletes"))


def refused(journal: str, why: str) -> str:
    """The message for a journal the server will not undo, and why."""
    return (
        f"The database's rollback journal {journal} was left by a writer that stopped, and"
        f" the server will not undo it: {why}. Ask the operator to look at it. Nothing was"
        " changed."
    )
