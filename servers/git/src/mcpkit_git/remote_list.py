"""What git_remote shows: the remotes a repository names and their URLs, credentials hidden.

A URL may carry a password or a token (`https://user:token@host/...`, or a token as the
user name): whatever reaches the model reaches its provider and its logs. So the part of
a URL before `@` is shown as `***`, except a user name alone over ssh (`ssh://git@host`),
which is an account, not a secret. The scp-like form (`git@host:path`) holds no password.
"""

from typing_extensions import TypedDict

from . import remotes
from .errors import GitError
from .repo import Git

MAX_REMOTES = 100
"""Remotes shown at most (each costs a few git commands)."""
HIDDEN = "***"
ACCOUNT_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git"})
"""Schemes whose user name alone is an account (`git@`), shown as it is."""


class Remote(TypedDict):
    """A remote: where a fetch reads and a push writes (`problem`: why its URLs are not shown)."""

    name: str
    fetch_urls: list[str]
    push_urls: list[str]
    problem: str | None


class Remotes(TypedDict):
    """The repository's remotes, by name (`truncated`: there are more than `MAX_REMOTES`)."""

    remotes: list[Remote]
    truncated: bool


async def listed(git: Git) -> Remotes:
    """Return the remotes of the repository with their URLs, as git rewrites them, redacted."""
    names = sorted((await git.run(["remote"])).text.split())
    found: list[Remote] = []
    for name in names[:MAX_REMOTES]:
        try:
            fetch = await remotes.urls(git, name, push=False)
            push = await remotes.urls(git, name, push=True)
        except GitError as exc:  # a URL with a line break, or none git can read
            found.append(Remote(name=name, fetch_urls=[], push_urls=[], problem=str(exc)))
            continue
        found.append(
            Remote(
                name=name,
                fetch_urls=[redacted(url) for url in fetch],
                push_urls=[redacted(url) for url in push],
                problem=None,
            )
        )
    return Remotes(remotes=found, truncated=len(names) > MAX_REMOTES)


def redacted(url: str) -> str:
    """Return `url` with the credentials it may carry replaced by `***`."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url  # a path, or scp-like `user@host:path`: no password there
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return url
    if scheme.lower() in ACCOUNT_SCHEMES and ":" not in userinfo:
        return url
    return f"{scheme}://{HIDDEN}@{host}{slash}{path}"
