"""mcp-git: git for models, jailed to its repositories and inert in hostile ones.

`build_server` declares the server: its lifespan provides the `Repositories` (the jail,
the hardened git runner, the tiers), which handlers get by annotation; `GitError`, the
work's one error, is declared once. The read-only tools register from `read_tools`;
the changing ones, by tier, from `change_tools`, `branch_tools` and `merge_tools` (none
with `--read-only`). The guards live in `runner` (how git is run), `jail` (which
repository) and `repo` (each value).
"""

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

from mcpkit import Server
from mcpkit.places import RootsMode

from . import __version__
from .access import Repositories, Tiers
from .branch_tools import register_branch_tools
from .change_tools import register_change_tools
from .errors import GitError
from .merge_tools import register_merge_tools
from .prompts import register_prompts
from .read_tools import register_read_tools
from .resources import register_resources
from .runner import Settings

INSTRUCTIONS = (
    "Git repositories (git_list_repositories names them; every tool takes repo_path)."
    " Look with git_status, git_diff_unstaged, git_diff_staged, git_diff, git_log, git_show,"
    " git_blame, git_grep, git_ls_files, git_reflog, git_remote; change, where the operator"
    " allows it, with git_add, git_commit, git_reset, git_create_branch, git_delete_branch,"
    " git_rename_branch, git_worktree, git_checkout, git_merge, git_cherry_pick, git_revert,"
    " git_restore, git_clean, git_stash, git_tag."
)


def build_server(
    places: Sequence[str],
    *,
    settings: Settings | None = None,
    tiers: Tiers | None = None,
    roots: RootsMode = "narrow",
) -> Server:
    """Return the mcp-git server of the repositories (or folders holding them) in `places`.

    Raises:
        ValueError: a place does not exist.
    """
    chosen = tiers or Tiers()
    repositories = Repositories(places, settings or Settings(), chosen, roots)

    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[Repositories]:
        yield repositories

    app = Server(
        "mcp-git",
        __version__,
        title="Git",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        errors=(GitError,),
    )
    register_read_tools(app)
    if not chosen.read_only:
        register_change_tools(app, chosen)
        register_branch_tools(app, chosen)
        register_merge_tools(app)
    register_resources(app)
    register_prompts(app)
    return app
