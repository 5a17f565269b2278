"""URI templates, the RFC 6570 subset resources need: `{var}` and `{+var}`.

`{var}` matches one path segment (no `/`, `?` or `#`); `{+var}` (reserved expansion) may span
segments. Matched values are percent-decoded.
"""

import re
from urllib.parse import quote, unquote

_EXPRESSION = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")


class UriTemplate:
    """A compiled URI template.

    Raises:
        ValueError: the template uses an expression other than `{var}` or `{+var}`, or
            names a variable twice.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        pattern: list[str] = []
        names: list[str] = []
        position = 0
        for match in _EXPRESSION.finditer(template):
            literal = template[position : match.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"Unsupported URI template expression in {template!r}")
            pattern.append(re.escape(literal))
            reserved, name = match.groups()
            if name in names:
                raise ValueError(f"Variable {name!r} appears twice in {template!r}")
            names.append(name)
            pattern.append(f"(?P<{name}>.*)" if reserved else f"(?P<{name}>[^/?#]+)")
            position = match.end()
        rest = template[position:]
        if "{" in rest or "}" in rest:
            raise ValueError(f"Unsupported URI template expression in {template!r}")
        pattern.append(re.escape(rest))
        self.variables: tuple[str, ...] = tuple(names)
        self._regex = re.compile("".join(pattern))
        self._reserved = {m.group(2) for m in _EXPRESSION.finditer(template) if m.group(1)}

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the variables if `uri` matches the template, else None."""
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        return {name: unquote(value) for name, value in found.groupdict().items()}

    def expand(self, values: dict[str, str]) -> str:
        """Return the URI for `values` (percent-encoding what each expression requires)."""

        def substitute(match: re.Match[str]) -> str:
            name = match.group(2)
            safe = ":/?#[]@!$&'()*+,;=" if name in self._reserved else ""
            return quote(values[name], safe=safe)

        return _EXPRESSION.sub(substitute, self.template)
