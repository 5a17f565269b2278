"""mcp-fs: the reference filesystem tools and more, confined to the allowed directories.

`build_server` declares the server and registers each feature from its own module:
`read_tools` and `search_tools` (reads), `write_tools` (changes, unless read-only),
`file_resources` (resources, completion, subscriptions) and `prompts`. The server's
lifespan provides the `Access` every handler gets by annotation: the operator's policy
and the client's roots turned into the request's sandbox. The work itself is in modules
that know nothing of MCP (`reading`, `writing`, `listing`, `transfer`, `walk`, ...); their
`FsError`s are turned into what each protocol method answers once, by `errors=`.
"""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial

from mcpkit import Server

from . import __version__
from .access import Access
from .file_resources import register_file_resources, register_file_watch
from .policy import Policy
from .prompts import register_prompts
from .read_tools import register_listing_tools, register_read_tools
from .sandbox import FsError
from .search_tools import register_search_tools
from .write_tools import register_transfer_tools, register_write_tools

INSTRUCTIONS = (
    "Files and directories inside the allowed directories (list_allowed_directories). Read"
    " in pages (offset/limit, next_offset), search with search_files and search_content,"
    " change with edit_file (exact, unique matches) and write_file."
)


@asynccontextmanager
async def serving(policy: Policy, read_only: bool) -> AsyncGenerator[Access]:
    """Provide the `Access` of `policy` while the server runs."""
    yield Access(policy, read_only=read_only)


def build_server(policy: Policy, *, read_only: bool = False) -> Server:
    """Return the mcp-fs server for `policy`; `read_only` leaves out every write tool."""
    app = Server(
        "mcp-fs",
        __version__,
        title="Filesystem",
        instructions=INSTRUCTIONS,
        lifespan=partial(serving, policy, read_only),
        errors=(FsError,),
    )
    register_read_tools(app)
    register_listing_tools(app)
    register_search_tools(app)
    if not read_only:
        register_write_tools(app)
        register_transfer_tools(app)
    register_file_resources(app)
    register_file_watch(app)
    register_prompts(app)
    return app
