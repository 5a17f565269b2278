"""The insights memo of the reference server: notes the model appends, read as memo://insights."""

from .errors import SqliteError

MAX_INSIGHTS = 1000
MAX_INSIGHT_CHARS = 10_000


class Memo:
    """Insights gathered while the server runs (in memory, as the reference keeps them)."""

    def __init__(self) -> None:
        self.insights: list[str] = []

    def append(self, insight: str) -> int:
        """Add an insight; return how many there are.

        Raises:
            SqliteError: the memo holds MAX_INSIGHTS already (it is kept in memory).
        """
        if len(self.insights) >= MAX_INSIGHTS:
            raise SqliteError(f"The memo holds {MAX_INSIGHTS} insights, as many as it keeps.")
        self.insights.append(insight)
        return len(self.insights)

    def text(self) -> str:
        """The memo as the resource shows it."""
        if not self.insights:
            return "No business insights have been discovered yet."
        lines = "\n".join(f"- {insight}" for insight in self.insights)
        return f"Business insights memo\n\nKey insights discovered:\n\n{lines}\n"
