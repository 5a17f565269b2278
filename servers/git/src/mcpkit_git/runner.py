"""Run the `git` command line, inert in a hostile repository.

Every git process is started from an argument list (never a shell) with an environment
built here rather than inherited, and with `-c` overrides that come before any
repository configuration: command-line configuration beats the repository's own, so a
`.git/config` written by someone else cannot make git run a program (fsmonitor, hooks,
pager, editor, external diff, credential helper, ssh command, signature checker). Drivers
named by the repository (filters, diff and merge drivers, upload/receive packs) are
neutralised per repository by `hardening.driver_overrides`.

Output is capped (the rest is cut, and said so); cancelling the call kills git's whole
process group; each command is reported to a `Log` callback (argv, exit status, time).
"""

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import anyio
import anyio.abc

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
NEUTRAL_HOME = "/nonexistent"
STOP_GRACE = 2.0
"""Seconds git has, once told to stop, to remove its lock files before it is killed."""

INERT_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("tag.forceSignAnnotated", "false"),
    ("protocol.allow", "never"),
    ("protocol.https.allow", "always"),
    ("protocol.ssh.allow", "always"),
    ("protocol.file.allow", "always"),
    ("core.alternateRefsCommand", ""),
    ("uploadpack.packObjectsHook", ""),
    ("maintenance.auto", "false"),
    ("gc.auto", "0"),
    ("fetch.recurseSubmodules", "false"),
    ("submodule.recurse", "false"),
    ("color.ui", "false"),
)
"""Configuration given on every command line: each key is one a repository could arm."""

DROPPED_VARIABLES = ("PAGER", "EDITOR", "VISUAL", "SSH_AUTH_SOCK_OVERRIDE", "LD_PRELOAD")


@dataclass(frozen=True)
class Settings:
    """How the operator wants git run.

    `allow_hooks`: let the repository's hooks run (off: `core.hooksPath=/dev/null`).
    `inherit_config`: read the user's global and system configuration and keep the
    inherited `GIT_*` variables (off: neither).
    """

    git: str = "git"
    allow_hooks: bool = False
    inherit_config: bool = False
    timeout: float = 120.0
    max_output: int = 8 * 1024 * 1024
    identity: tuple[str, str] = ("mcp-git", "mcp-git@localhost")


class Command(NamedTuple):
    """What a `Log` callback hears of one git command."""

    argv: tuple[str, ...]
    status: int | None  # None: killed (cancelled or timed out)
    seconds: float


Log = Callable[[Command], Awaitable[None]]
Tick = Callable[[int], Awaitable[None]]
"""Hears how many bytes of output git has written so far."""


class Result(NamedTuple):
    """A finished git command: exit status, output (cut at the cap), and whether it was cut."""

    status: int
    stdout: bytes
    stderr: bytes
    truncated: bool

    @property
    def text(self) -> str:
        """Standard output decoded as UTF-8 (bytes that are not become U+FFFD)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def error(self) -> str:
        """Standard error, decoded and stripped, for messages."""
        return self.stderr.decode("utf-8", "replace").strip()


class GitFailed(Exception):
    """Git exited with a failure status; the message is git's own explanation."""

    def __init__(self, argv: Sequence[str], result: Result) -> None:
        self.result = result
        what = " ".join(argv[:1])
        super().__init__(result.error or f"git {what} failed with status {result.status}")


class TimedOut(Exception):
    """Git did not finish within the operator's time limit and was killed."""


@dataclass
class Runner:
    """Runs git the hardened way; `log` (if any) hears of every command."""

    settings: Settings = field(default_factory=Settings)

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Return the environment of a git process, built from `base` (default: ours)."""
        source = dict(os.environ if base is None else base)
        env: dict[str, str] = {}
        for key, value in source.items():
            if key.startswith("GIT_") and not self.settings.inherit_config:
                continue
            if key in DROPPED_VARIABLES:
                continue
            env[key] = value
        name, email = self.settings.identity
        env.update(
            {
                "PATH": source.get("PATH") or SAFE_PATH,
                "LC_ALL": "C",
                "LANG": "C",
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_ASKPASS": "",
                "SSH_ASKPASS": "",
                "GIT_PAGER": "cat",
                "PAGER": "cat",
                "GIT_EDITOR": "true",
                "GIT_SEQUENCE_EDITOR": "true",
                "GIT_NO_REPLACE_OBJECTS": "1",
                "GIT_ATTR_NOSYSTEM": "1",
                "GIT_PROTOCOL_FROM_USER": "0",
            }
        )
        if not self.settings.inherit_config:
            env.update(
                {
                    "HOME": NEUTRAL_HOME,
                    "XDG_CONFIG_HOME": NEUTRAL_HOME,
                    "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_CONFIG_GLOBAL": "/dev/null",
                    "GIT_AUTHOR_NAME": name,
                    "GIT_AUTHOR_EMAIL": email,
                    "GIT_COMMITTER_NAME": name,
                    "GIT_COMMITTER_EMAIL": email,
                }
            )
        return env

    def argv(self, args: Sequence[str], overrides: Sequence[tuple[str, str]] = ()) -> list[str]:
        """Return the full argument list: git, the inert `-c` settings, then `args`."""
        config = list(INERT_CONFIG)
        if not self.settings.allow_hooks:
            config.append(("core.hooksPath", "/dev/null"))
        config.extend(overrides)
        argv = [self.settings.git, "--no-pager", "--no-replace-objects"]
        for key, value in config:
            argv += ["-c", f"{key}={value}"]
        return [*argv, *args]

    async def run(
        self,
        cwd: str,
        args: Sequence[str],
        *,
        overrides: Sequence[tuple[str, str]] = (),
        env: Mapping[str, str] | None = None,
        check: bool = True,
        max_bytes: int | None = None,
        log: Log | None = None,
        on_output: Tick | None = None,
    ) -> Result:
        """Run `git args` in `cwd` and return its result.

        `env` adds variables (e.g. `GIT_CEILING_DIRECTORIES`); `max_bytes` caps standard
        output (default: the operator's cap; the rest is cut and `truncated` set);
        `on_output(n)` hears the number of bytes read so far.

        Raises:
            GitFailed: git exited with a non-zero status and `check` is true.
            TimedOut: git ran longer than the operator's limit (it was killed).
        """
        argv = self.argv(args, overrides)
        environment = self.environment()
        if env:
            environment.update(env)
        cap = min(max_bytes or self.settings.max_output, self.settings.max_output)
        started = time.monotonic()
        status: int | None = None
        try:
            result = await self._spawn(argv, cwd, environment, cap, on_output)
            status = result.status
        finally:
            if log is not None:
                with anyio.CancelScope(shield=True):
                    await log(Command(tuple(args), status, time.monotonic() - started))
        if check and result.status != 0:
            raise GitFailed(args, result)
        return result

    async def _spawn(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        cap: int,
        on_output: Tick | None,
    ) -> Result:
        process = await anyio.open_process(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,  # git never reads our stdin: it is the stdio transport
            start_new_session=True,  # its own process group, killed whole when cancelled
        )
        out = bytearray()
        err = bytearray()
        truncated = False
        status = -1
        try:
            with anyio.fail_after(self.settings.timeout):
                async with anyio.create_task_group() as tasks:

                    async def drain_errors() -> None:
                        assert process.stderr is not None
                        async for chunk in process.stderr:
                            if len(err) < 65536:
                                err.extend(chunk[: 65536 - len(err)])

                    tasks.start_soon(drain_errors)
                    assert process.stdout is not None
                    async for chunk in process.stdout:
                        out.extend(chunk)
                        if on_output is not None:
                            await on_output(len(out))
                        if len(out) > cap:
                            truncated = True
                            del out[cap:]
                            with anyio.CancelScope(shield=True):
                                await _stop(process)
                            break
                    status = await process.wait()
        except TimeoutError:
            raise TimedOut(
                f"git ran longer than {self.settings.timeout:g} s and was stopped"
            ) from None
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    await _stop(process)
                await process.aclose()
        return Result(0 if truncated else status, bytes(out), bytes(err), truncated)


async def _stop(process: anyio.abc.Process) -> None:
    """Stop git and everything it started (hooks it was allowed, helpers).

    SIGTERM first, which git answers by removing its lock files (`index.lock`) before it
    exits; SIGKILL after `STOP_GRACE` seconds, to the whole group, for what ignored it.
    """
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(STOP_GRACE):
        await process.wait()
    _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


def _signal_group(pid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)
