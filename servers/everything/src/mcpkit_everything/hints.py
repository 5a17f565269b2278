"""The tool annotations mcp-everything's tools share."""

from mcpkit import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""A tool that only reads (or asks the client) and touches nothing outside the server."""

CHANGES_LISTS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
"""A tool that adds or removes one of the server's own tools or prompts."""
