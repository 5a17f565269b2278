"""Run the `git` command line, inert in a hostile repository.

Every git process is started from an argument list (never a shell) with an environment
built here rather than inherited, which carries inert settings as command-line
configuration (`GIT_CONFIG_PARAMETERS`, where git keeps its `-c` options): that beats the
repository's own, so a `.git/config` written by someone else cannot make git run a
program (fsmonitor, hooks, pager, editor, external diff, credential helper, ssh command,
signature checker). Drivers named by the repository (filters, diff and merge drivers,
upload/receive packs) are neutralised per repository by `jail.driver_overrides`, given as
`-c` options. (Given all as `-c` options, the settings cost each git process 0.25 ms to
parse, against 0.1 ms from the environment.) Submodules are left alone
(`diff.ignoreSubmodules=all`): status and diff would run git in each one, under that
submodule's own configuration. Remotes speak https, ssh or file only (`GIT_ALLOW_PROTOCOL`,
which beats any `protocol.<name>.allow` of the repository's: `ext::` runs a command).

Output is capped (the rest is cut, and said so); cancelling the call kills git's whole
process group; each command is reported to a `Log` callback (argv, exit status, time).
At most `AT_ONCE` git processes run at once: 300 calls at once had started 300 (1.4 GB).
"""

import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import anyio
import anyio.lowlevel

from .process import Result, Tick, communicate

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
NEUTRAL_HOME = "/nonexistent"
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
    ("push.gpgSign", "false"),  # a signed push ran gpg.ssh.defaultKeyCommand, a command
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("tag.forceSignAnnotated", "false"),
    ("core.alternateRefsCommand", "true"),  # lists no ref: empty, it is a command named ""
    ("maintenance.auto", "false"),
    ("gc.auto", "0"),
    ("fetch.recurseSubmodules", "false"),
    ("push.followTags", "false"),  # a push sends the branch it names, no more
    # A push that negotiates first fetches from the remote's URL, whose upload-pack is the
    # one `remote.<url>.uploadpack` names: not the program the push was given.
    ("push.negotiate", "false"),
    ("rebase.updateRefs", "false"),  # a rebase moves its own branch, no other
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),  # status and diff would run git in each submodule
    # A diff writes no index: it took index.lock to refresh the index (under --read-only
    # too), which the user's own git command then found taken. See pages.names.
    ("diff.autoRefreshIndex", "false"),
    # Files a configuration may name anywhere on the machine, which git would read (or
    # write: a fetch's cookie jar): the operator's own too, with --inherit-config.
    ("core.attributesFile", "/dev/null"),
    ("core.excludesFile", "/dev/null"),
    ("mailmap.file", "/dev/null"),
    ("diff.orderFile", "/dev/null"),
    ("http.cookieFile", ""),
    ("http.saveCookies", "false"),
    ("http.sslVerify", "true"),
    # Output read as git writes it by default: UTF-16 logs parsed as no commit, and grep's
    # columns as the matching line.
    ("i18n.logOutputEncoding", "UTF-8"),
    ("grep.column", "false"),
    # Colour: a repository's `color.diff=always` beats `color.ui`, and escapes reach text.
    ("color.ui", "false"),
    ("color.diff", "false"),
    ("color.status", "false"),
    ("color.branch", "false"),
    ("color.grep", "false"),
    ("color.showBranch", "false"),
    ("color.interactive", "false"),
)
"""Configuration given to every git process: each key is one a repository could arm.

`blame.ignoreRevsFile` is not among them: it adds to a list that `-c` cannot empty, so
`git_blame` checks where it points (`reading.blame`). Keys for one URL (`http.<url>.*`)
are overridden per repository (`jail.driver_overrides`)."""

AT_ONCE = 8
"""Git processes running at once; more wait their turn (within their time limit)."""
AT_ONCE_IN_ONE = 4
"""Git processes running at once in one repository: a hostile one (a `.gitignore` that is
a named pipe, on which git waits until its time is up) leaves the others turns."""
DROPPED_VARIABLES = ("PAGER", "EDITOR", "VISUAL", "SSH_AUTH_SOCK_OVERRIDE", "LD_PRELOAD")
SERVER_PREFIXES = ("MCPKIT_", "MCP_")
"""The server's own settings, which stay with it: the HTTP token and the OAuth client
secret among them, which a hook, a credential helper or ssh would read from git's."""


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


MAX_EXPLANATION = 4096
"""Characters of standard output that explain a failure, when standard error says nothing."""


class GitFailed(Exception):
    """Git exited with a failure status; the message is git's own explanation.

    Git explains on standard error, but for some failures (`git commit` of a submodule it
    cannot read) on standard output: that is its explanation then.
    """

    def __init__(self, argv: Sequence[str], result: Result) -> None:
        self.result = result
        what = " ".join(argv[:1])
        said = result.error or result.text[:MAX_EXPLANATION].strip()
        super().__init__(said or f"git {what} failed with status {result.status}")


class TimedOut(Exception):
    """Git did not finish within the operator's time limit and was killed."""


def config_parameters(settings: Sequence[tuple[str, str]]) -> str:
    """Return `settings` as git passes its `-c` options on to the programs it runs.

    Each is `'key=value'`, quoted as for `sh`; git splits it at its first `=`, so no key
    may hold one.
    """
    quoted = (f"{key}={value}".replace("'", "'\\''") for key, value in settings)
    return " ".join(f"'{setting}'" for setting in quoted)


def absolute_path(path: str) -> str:
    """Return `path` (a PATH value) without its relative entries, or `SAFE_PATH` if none is left.

    A relative entry (`.`, or an empty one) would be looked up in the directory git runs
    in: the repository, where a hostile `git` or helper program may wait.
    """
    kept = [entry for entry in path.split(os.pathsep) if os.path.isabs(entry)]
    return os.pathsep.join(kept) or SAFE_PATH


class Turn:
    """One of a limiter's tokens, held for an `async with` block.

    Taken without a turn of the event loop when one is free: `CapacityLimiter`'s own
    `async with` yields once for each, two more loop turns for every git command.
    """

    __slots__ = ("limiter",)

    def __init__(self, limiter: anyio.CapacityLimiter) -> None:
        self.limiter = limiter

    async def __aenter__(self) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()  # a cancelled call starts no git
        try:
            self.limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self.limiter.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.limiter.release()


@dataclass
class Runner:
    """Runs git the hardened way; `log` (if any) hears of every command."""

    settings: Settings = field(default_factory=Settings)
    _ours: dict[str, str] | None = field(default=None, init=False, repr=False, compare=False)
    _git: str | None = field(default=None, init=False, repr=False, compare=False)
    _turns: anyio.CapacityLimiter | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _turns_in: dict[str, anyio.CapacityLimiter] = field(
        default_factory=dict[str, anyio.CapacityLimiter], init=False, repr=False, compare=False
    )
    """The turns of each folder git runs in now (a repository), by path."""

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Return the environment of a git process, built from `base`.

        The default, built from this process's environment, is built once.
        """
        if base is not None:
            return self._build(base)
        if self._ours is None:
            self._ours = self._build(os.environ)
        return dict(self._ours)

    def _build(self, base: Mapping[str, str]) -> dict[str, str]:
        env: dict[str, str] = {}
        for key, value in base.items():
            if key.startswith("GIT_") and not self.settings.inherit_config:
                continue
            if key in DROPPED_VARIABLES or key.startswith(SERVER_PREFIXES):
                continue
            env[key] = value
        name, email = self.settings.identity
        env.update(
            {
                "PATH": absolute_path(base.get("PATH") or SAFE_PATH),
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
                # Beats every protocol.<name>.allow a repository sets (ext:: runs a command).
                "GIT_ALLOW_PROTOCOL": "https:ssh:file",
                "GIT_FLUSH": "0",  # whole buffers: log wrote (and woke us) once per commit
                # A repository that lacks an object never fetches it on its own (through
                # its remote's upload-pack, a command its configuration names).
                "GIT_NO_LAZY_FETCH": "1",
            }
        )
        # With --inherit-config, the operator's own come first: git takes a key's last value.
        inert = config_parameters(self.inert)
        inherited = env.get("GIT_CONFIG_PARAMETERS")
        env["GIT_CONFIG_PARAMETERS"] = f"{inherited} {inert}" if inherited else inert
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

    @property
    def inert(self) -> list[tuple[str, str]]:
        """The settings that keep git from running anything a repository names."""
        if self.settings.allow_hooks:
            return list(INERT_CONFIG)
        return [*INERT_CONFIG, ("core.hooksPath", "/dev/null")]

    def argv(self, args: Sequence[str], overrides: Sequence[tuple[str, str]] = ()) -> list[str]:
        """Return the full argument list: git, `overrides` as `-c` options, then `args`.

        git is named by its absolute path, found once on the (absolute) PATH: looked up
        for each command, it cost more than a small command takes.
        """
        if self._git is None:
            self._git = self.executable()
        argv = [self._git, "--no-pager", "--no-replace-objects"]
        for key, value in overrides:
            argv += ["-c", f"{key}={value}"]
        return [*argv, *args]

    def executable(self) -> str:
        """Return the git program: the operator's path, or `git` found on the PATH.

        Not found, it stays as given, so running it fails with the system's own error.
        """
        git = self.settings.git
        if os.sep in git:
            return os.path.abspath(git)
        for directory in self.environment()["PATH"].split(os.pathsep):
            found = os.path.join(directory, git)
            if os.path.isfile(found) and os.access(found, os.X_OK):
                return found
        return git

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
        skip: int = 0,
        finish: bool = False,
    ) -> Result:
        """Run `git args` in `cwd` and return its result.

        `env` adds variables (e.g. `GIT_CEILING_DIRECTORIES`); `max_bytes` caps standard
        output (default: the operator's cap; the rest is cut and `truncated` set) after its
        first `skip` bytes, which are dropped; git is stopped there unless `finish`;
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
        if self._turns is None:  # made on the event loop, at the first command
            self._turns = anyio.CapacityLimiter(AT_ONCE)
        here = self._turns_in.get(cwd)
        if here is None:
            here = self._turns_in[cwd] = anyio.CapacityLimiter(AT_ONCE_IN_ONE)
        try:
            with anyio.fail_after(self.settings.timeout):
                async with Turn(here), Turn(self._turns):
                    result = await communicate(argv, cwd, environment, cap, on_output, skip, finish)
            status = result.status
        except TimeoutError:
            raise TimedOut(
                f"git ran longer than {self.settings.timeout:g} s and was stopped"
            ) from None
        finally:
            if not here.borrowed_tokens and not here.statistics().tasks_waiting:
                del self._turns_in[cwd]  # the last command there: no limiter kept per folder
            if log is not None:
                with anyio.CancelScope(shield=True):
                    await log(Command(tuple(args), status, time.monotonic() - started))
        if check and result.status != 0:
            raise GitFailed(args, result)
        return result
