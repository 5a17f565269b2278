"""The git runner directly: its environment, its overrides, the cap, the kill, the log.

And the jail's memory of checked repositories: one git process per call once checked.
"""

import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from mcpkit_git import process, reading
from mcpkit_git.jail import Cache, open_repository
from mcpkit_git.repo import Git
from mcpkit_git.runner import (
    AT_ONCE,
    AT_ONCE_IN_ONE,
    Command,
    GitFailed,
    Runner,
    Settings,
    TimedOut,
)
from servers.git.conftest import Repos, git, make_repo


def test_environment_is_built_not_inherited() -> None:
    inherited = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "GIT_DIR": "/elsewhere/.git",
        "GIT_WORK_TREE": "/elsewhere",
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor=touch /tmp/x'",
        "GIT_SSH_COMMAND": "touch /tmp/x",
        "GIT_EXEC_PATH": "/evil",
        "PAGER": "touch /tmp/x",
        "EDITOR": "touch /tmp/x",
        "MCPKIT_AUTH_TOKEN": "the server's own",
        "MCPKIT_OAUTH_CLIENT_SECRET": "the server's own",
        "SOMETHING": "kept",
    }
    env = Runner().environment(inherited)
    assert not {"GIT_DIR", "GIT_WORK_TREE", "GIT_SSH_COMMAND"} & set(env)
    assert "touch" not in env["GIT_CONFIG_PARAMETERS"]  # ours alone
    assert "GIT_EXEC_PATH" not in env
    assert env["PAGER"] == "cat"
    assert "EDITOR" not in env
    assert not [name for name in env if name.startswith("MCPKIT_")]
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_ASKPASS"] == ""
    assert env["SSH_ASKPASS"] == ""
    assert env["HOME"] != "/home/me"
    assert env["LC_ALL"] == "C"
    assert env["SOMETHING"] == "kept"


def test_relative_path_entries_are_dropped() -> None:
    env = Runner().environment({"PATH": ".:/usr/local/bin::bin:/usr/bin:"})
    assert env["PATH"] == "/usr/local/bin:/usr/bin"
    assert Runner().environment({"PATH": ".:"})["PATH"] == "/usr/local/bin:/usr/bin:/bin"


def test_git_is_found_once_by_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unusable = tmp_path / "unusable"
    unusable.mkdir()
    (unusable / "git").write_text("not a program")  # not executable: passed over
    usable = tmp_path / "usable"
    usable.mkdir()
    (usable / "git").write_text("#!/bin/sh\n")
    (usable / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{unusable}:{usable}:/usr/bin")
    assert Runner().argv(["status"])[0] == str(usable / "git")
    assert Runner(Settings(git="nowhere-git")).argv(["status"])[0] == "nowhere-git"


@pytest.mark.parametrize("path", [".:{PATH}", ":{PATH}", "{PATH}:"])
async def test_a_git_program_in_the_repository_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    # With "." or an empty entry in the operator's PATH, looking git up from inside the
    # repository would find the repository's own "git" first.
    repo = make_repo(tmp_path / "r")
    marker = tmp_path / "MARKER"
    for name in ("git", "ssh", "git-upload-pack"):
        planted = repo / name
        planted.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        planted.chmod(planted.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", path.format(PATH=os.environ["PATH"]))
    result = await Runner().run(str(repo), ["log", "-1", "--format=%s"])
    assert result.text == "second\n"
    assert not marker.exists()


def test_operator_may_keep_their_git_configuration() -> None:
    env = Runner(Settings(inherit_config=True)).environment(
        {"PATH": "/usr/bin", "HOME": "/home/me", "GIT_AUTHOR_NAME": "Me"}
    )
    assert env["HOME"] == "/home/me"
    assert env["GIT_AUTHOR_NAME"] == "Me"
    assert "GIT_CONFIG_GLOBAL" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0"  # never a prompt, whatever the operator asks
    assert env["GIT_ALLOW_PROTOCOL"] == "https:ssh:file"  # nor ext::, whatever the repository


def test_inert_settings_are_in_the_environment_and_hooks_are_off_unless_allowed() -> None:
    given = Runner().environment({"PATH": "/usr/bin"})["GIT_CONFIG_PARAMETERS"]
    for setting in (
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "core.pager=cat",
        "core.editor=true",
        "diff.external=",
        "log.showSignature=false",
        "credential.helper=",
        "core.sshCommand=ssh",
        "diff.ignoreSubmodules=all",
    ):
        assert f"'{setting}'" in given.split(" ")
    hooks = Runner(Settings(allow_hooks=True)).environment({"PATH": "/usr/bin"})
    assert "core.hooksPath" not in hooks["GIT_CONFIG_PARAMETERS"]


def test_overrides_come_before_the_command() -> None:
    argv = Runner().argv(["status"], [("filter.x.clean", "")])
    assert argv[1:] == ["--no-pager", "--no-replace-objects", "-c", "filter.x.clean=", "status"]


async def test_inert_settings_beat_the_repository_and_follow_the_operators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r")
    git(repo, "config", "core.pager", "touch PAGER")
    git(repo, "config", "core.editor", "touch EDITOR")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.editor=vi' 'my.own=kept'")
    runner = Runner(Settings(inherit_config=True))  # the operator's settings are read too
    for key, value in (("core.pager", "cat"), ("core.editor", "true"), ("my.own", "kept")):
        shown = await runner.run(str(repo), ["config", "--get", key])
        assert shown.text == f"{value}\n"


async def test_output_is_capped_and_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "big.txt").write_text("x" * 200_000)
    git(repo, "add", "big.txt")
    result = await Runner().run(str(repo), ["show", ":big.txt"], max_bytes=1000)
    assert result.truncated
    assert len(result.stdout) == 1000
    assert result.status == 0


async def test_a_change_past_the_output_cap_runs_to_its_end(repos: Repos) -> None:
    # Stopped at the cap and reported done: a stash pop applied the stash and was killed
    # before it dropped it, and the model was told it had popped.
    for number in range(300):
        (repos.repo / f"f{number:03}.txt").write_text("tracked\n")
    git(repos.repo, "add", ".")
    git(repos.repo, "commit", "-q", "-m", "many files")
    for number in range(300):
        (repos.repo / f"f{number:03}.txt").write_text("changed\n")
    git(repos.repo, "stash", "push", "-q")
    async with repos.serve(settings=Settings(max_output=1000)) as client:
        popped = await client.call_tool(
            "git_stash", {"repo_path": str(repos.repo), "action": "pop"}
        )
    assert not popped.get("isError"), popped
    assert git(repos.repo, "stash", "list") == ""
    assert (repos.repo / "f299.txt").read_text() == "changed\n"


async def test_failure_raises_with_gits_message_and_is_logged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    heard: list[Command] = []

    async def log(command: Command) -> None:
        heard.append(command)

    with pytest.raises(GitFailed, match="unknown revision"):
        await Runner().run(str(repo), ["log", "nope"], log=log)
    await Runner().run(str(repo), ["status"], log=log)
    assert [c.argv for c in heard] == [("log", "nope"), ("status",)]
    assert heard[0].status == 128
    assert heard[1].status == 0
    assert all(0 <= c.seconds < 10 for c in heard)


def fake_git(tmp_path: Path) -> tuple[Path, Path]:
    """A 'git' that starts a child which outlives it unless its group is killed."""
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "fake-git"
    script.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {pidfile}\nwait\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, pidfile


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as file:  # a zombie is dead
            return file.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def wait_for(path: Path) -> int:
    """Return the pid written to `path`, waiting up to 5 s for it."""
    deadline = time.monotonic() + 5
    while not path.exists() or not path.read_text().endswith("\n"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return int(path.read_text())


def wait_dead(pid: int) -> bool:
    """Return whether `pid` ended within 5 s."""
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


async def test_cancelling_kills_git_and_its_children(tmp_path: Path) -> None:
    script, pidfile = fake_git(tmp_path)
    runner = Runner(Settings(git=str(script)))
    heard: list[Command] = []

    async def log(command: Command) -> None:
        heard.append(command)

    child = 0
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: runner.run(str(tmp_path), ["status"], log=log))
        child = await anyio.to_thread.run_sync(wait_for, pidfile)
        assert alive(child)
        tasks.cancel_scope.cancel()
    assert await anyio.to_thread.run_sync(wait_dead, child)
    assert heard
    assert heard[0].status is None


async def test_timeout_kills_the_group(tmp_path: Path) -> None:
    script, pidfile = fake_git(tmp_path)
    runner = Runner(Settings(git=str(script), timeout=0.5))
    with pytest.raises(TimedOut):
        await runner.run(str(tmp_path), ["status"])
    assert await anyio.to_thread.run_sync(lambda: wait_dead(wait_for(pidfile)))


async def test_a_cancelled_call_kills_git_and_what_it_started(repos: Repos) -> None:
    pidfile = repos.outside / "hook.pid"
    hook = repos.repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {pidfile}\nwait\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    arguments = {"repo_path": str(repos.repo), "message": "never", "allow_empty": True}
    async with repos.serve(settings=Settings(allow_hooks=True)) as client:
        params = {"name": "git_commit", "arguments": arguments}
        client.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": params})
        child = await anyio.to_thread.run_sync(wait_for, pidfile)
        await client.notify("notifications/cancelled", {"requestId": "slow"})
        assert await anyio.to_thread.run_sync(wait_dead, child)
        with anyio.fail_after(5):
            await client.request("ping")
    assert all(message.get("id") != "slow" for message in client.messages)
    assert git(repos.repo, "log", "-1", "--format=%s").strip() == "second"
    assert not (repos.repo / ".git" / "index.lock").exists()  # git was let to clean up


async def test_a_cancelled_git_removes_its_lock_files(repos: Repos) -> None:
    pidfile = repos.outside / "hook.pid"
    hook = repos.repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {pidfile}\nwait\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    (repos.repo / "a.txt").write_text("changed\n")
    runner = Runner(Settings(allow_hooks=True))
    locks: list[str] = []
    async with anyio.create_task_group() as tasks:
        # A commit of named paths holds index.lock (and a next-index lock) while its hook runs.
        tasks.start_soon(lambda: runner.run(str(repos.repo), ["commit", "-m", "x", "--", "a.txt"]))
        await anyio.to_thread.run_sync(wait_for, pidfile)
        locks = sorted(path.name for path in (repos.repo / ".git").glob("*.lock"))
        tasks.cancel_scope.cancel()
    assert "index.lock" in locks
    assert list((repos.repo / ".git").glob("*.lock")) == []


async def test_a_checked_repository_costs_no_git_until_its_configuration_changes(
    repos: Repos,
) -> None:
    runner = Runner()
    heard: list[Command] = []

    async def log(command: Command) -> None:
        heard.append(command)

    places = [(str(repos.folder), False)]
    cache: Cache = {}
    first = await open_repository(runner, str(repos.repo), places, log=log, cache=cache)
    assert [c.argv[0] for c in heard] == ["rev-parse", "config"]
    # What git writes in .git as it works (the index, refs, logs) decides nothing here.
    (repos.repo / "c.txt").write_text("new\n")
    git(repos.repo, "add", "c.txt")
    git(repos.repo, "commit", "-q", "-m", "third")
    git(repos.repo, "status")
    heard.clear()
    again = await open_repository(runner, str(repos.repo), places, log=log, cache=cache)
    await reading.status(Git(runner, again, log))
    assert again == first
    assert [c.argv[0] for c in heard] == ["status"]  # one git process for one call
    git(repos.repo, "config", "filter.late.clean", "cat")
    heard.clear()
    changed = await open_repository(runner, str(repos.repo), places, log=log, cache=cache)
    assert [c.argv[0] for c in heard] == ["rev-parse", "config"]
    assert ("filter.late.clean", "") in changed.overrides


async def test_a_flood_on_standard_error_does_not_stall_git(tmp_path: Path) -> None:
    script = tmp_path / "noisy-git"
    script.write_text("#!/bin/sh\nhead -c 1000000 /dev/zero >&2\necho done\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    with anyio.fail_after(10):
        result = await Runner(Settings(git=str(script))).run(str(tmp_path), ["status"])
    assert result.stdout == b"done\n"
    assert len(result.stderr) == 65536  # kept for messages, the rest read and dropped


async def test_without_pidfds_the_exit_is_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    repo = make_repo(tmp_path / "r")
    result = await Runner().run(str(repo), ["log", "-1", "--format=%s"])
    assert result.text == "second\n"
    script, pidfile = fake_git(tmp_path)
    runner = Runner(Settings(git=str(script)))
    child = 0
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: runner.run(str(tmp_path), ["status"]))
        child = await anyio.to_thread.run_sync(wait_for, pidfile)
        tasks.cancel_scope.cancel()
    assert await anyio.to_thread.run_sync(wait_dead, child)


async def test_at_most_at_once_git_processes_run_together(tmp_path: Path) -> None:
    # 300 calls at once had started 300 git processes (1.4 GB); the rest now wait. One
    # repository has at most AT_ONCE_IN_ONE turns: 8 calls on a hostile one (a .gitignore
    # that is a named pipe, where git waits until its time is up) held every turn.
    log = tmp_path / "running.log"
    script = tmp_path / "git"
    # Git is given its folder first (`-C FOLDER`), as $2.
    script.write_text(f"#!/bin/sh\necho start $2 >> {log}\nsleep 0.2\necho end $2 >> {log}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    folders = [tmp_path / "hostile", tmp_path / "other"]
    runner = Runner(Settings(git=str(script)))
    async with anyio.create_task_group() as tasks:
        for folder in folders:  # every call in the first folder asks before any other
            folder.mkdir()
            for _ in range(2 * AT_ONCE):
                tasks.start_soon(runner.run, str(folder), ["status"])
    running: dict[str, int] = dict.fromkeys(map(str, folders), 0)
    most = {"all": 0, **running}
    for line in log.read_text().splitlines():
        event, folder = line.split(" ", 1)
        running[folder] += 1 if event == "start" else -1
        most[folder] = max(most[folder], running[folder])
        most["all"] = max(most["all"], sum(running.values()))
    assert most == {"all": AT_ONCE, **dict.fromkeys(map(str, folders), AT_ONCE_IN_ONE)}


async def test_a_call_cancelled_before_its_turn_starts_no_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A turn free at once is taken without yielding to the event loop: the cancellation
    # is still looked for first, or a command cancelled already would be started, then
    # killed midway.
    started: list[Sequence[str]] = []
    spawn = process.start

    def start(argv: Sequence[str], cwd: str, env: dict[str, str]) -> process.Child:
        started.append(argv)
        return spawn(argv, cwd, env)

    monkeypatch.setattr(process, "start", start)
    repo = make_repo(tmp_path / "r")
    runner = Runner()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await runner.run(str(repo), ["status"])
    assert started == []
    await runner.run(str(repo), ["status"])  # the turns were given back
    assert len(started) == 1


async def test_git_is_given_no_descriptor_the_server_inherited(tmp_path: Path) -> None:
    # Spawned, a program gets every inheritable descriptor: one the server was given (a
    # host's, a supervisor's) reached git, its hooks and helpers.
    script = tmp_path / "fd-git"
    script.write_text("#!/bin/sh\nls /proc/$$/fd\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    given = 200
    opened = os.open(os.devnull, os.O_RDONLY)
    os.dup2(opened, given)  # inheritable, as a descriptor handed down is
    os.close(opened)
    process._keep_descriptors.cache_clear()  # pyright: ignore[reportPrivateUsage]
    try:
        result = await Runner(Settings(git=str(script))).run(str(tmp_path), ["status"])
    finally:
        os.close(given)
    seen = set(map(int, result.text.split()))
    assert {0, 1, 2} <= seen
    assert given not in seen
