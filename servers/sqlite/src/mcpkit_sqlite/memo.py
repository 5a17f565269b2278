"""The insights memo of the reference server: notes the model appends, read as memo://insights."""


class Memo:
    """Insights gathered while the server runs (in memory, as the reference keeps them)."""

    def __init__(self) -> None:
        self.insights: list[str] = []

    def append(self, insight: str) -> int:
        """Add an insight; return how many there are."""
        self.insights.append(insight)
        return len(self.insights)

    def text(self) -> str:
        """The memo as the resource shows it."""
        if not self.insights:
            return "No business insights have been discovered yet."
        lines = "\n".join(f"- {insight}" for insight in self.insights)
        return f"Business insights memo\n\nKey insights discovered:\n\n{lines}\n"
