"""Whether a media query holds on the screen pages are read as: `VIEWPORT`, its user's defaults.

A page's stylesheet may hide an element on one screen and show it on another
(`@media (min-width: 768px) { .menu { display: block } }`); which of its rules apply is
decided for one screen, a desktop browser's window. A query about its width, height,
orientation or its user's preferences is decided there, print and speech never hold, and
a query this module cannot read (an `or`, a resolution, a feature it does not know) is
not known: `holds` says None, and `stylesheets` lets what such a rule says hide an
element, never show one.
"""

import re

VIEWPORT = (1280, 800)
"""The screen's width and height, in CSS pixels."""
PREFERENCES = {
    "orientation": "landscape",
    "prefers-color-scheme": "light",
    "prefers-reduced-motion": "no-preference",
    "prefers-contrast": "no-preference",
    "hover": "hover",
    "any-hover": "hover",
    "pointer": "fine",
    "any-pointer": "fine",
    "scripting": "enabled",
    "update": "fast",
    "display-mode": "browser",
}
"""The screen's other features, as a query names them and their values."""
_PIXELS = {"px": 1.0, "em": 16.0, "rem": 16.0}
_FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "="}
_PLAIN = re.compile(r"\(\s*([a-z-]+)\s*(?::\s*([^()]*?))?\s*\)")
_RANGE = re.compile(r"\(\s*([^()<>=]+?)\s*(<=|>=|<|>|=)\s*([^()<>=]+?)\s*\)")


def holds(queries: str) -> bool | None:
    """Say whether a media query list (`screen and (min-width: 40em), print`) holds.

    None: whether it does is not known.
    """
    found = [_query(" ".join(query.lower().split())) for query in queries.split(",")]
    if any(one is True for one in found):
        return True
    return False if all(one is False for one in found) else None


def _query(query: str) -> bool | None:
    """Say whether one query (`not screen and (width < 600px)`) holds."""
    negated = query.startswith("not ")
    query = query.removeprefix("not ").removeprefix("only ")
    result: bool | None = True
    for part in query.split(" and ") if query else ():
        one = _feature(part.strip()) if part.strip().startswith("(") else _type(part.strip())
        result = False if one is False or result is False else (result and one)
    return (not result if result is not None else None) if negated else result


def _type(name: str) -> bool | None:
    """Say whether a media type is the screen's (an unknown one never is)."""
    return name in ("all", "screen")


def _feature(text: str) -> bool | None:
    """Say whether a feature in parentheses (`(min-width: 40em)`, `(width >= 600px)`) holds."""
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        name, value = plain.group(1), plain.group(2)
        if value is None:  # a feature alone: it is there (not 0, not "none")
            return True if name in ("color", "width", "height", "hover", "pointer") else None
        for bound, operator in (("min-", ">="), ("max-", "<=")):
            if name.startswith(bound):
                return _compare(name.removeprefix(bound), operator, value)
        return _compare(name, "=", value)
    ranged = _RANGE.fullmatch(text)
    if ranged is None:
        return None
    left, operator, right = ranged.groups()
    if left in ("width", "height"):
        return _compare(left, operator, right)
    return _compare(right, _FLIPPED[operator], left)


def _compare(name: str, operator: str, value: str) -> bool | None:
    """Say whether the screen's feature `name` is `operator` `value`."""
    name = name.removeprefix("device-")
    if name in ("width", "height"):
        length = _length(value)
        if length is None:
            return None
        size = VIEWPORT[0] if name == "width" else VIEWPORT[1]
        return {
            "<": size < length,
            ">": size > length,
            "<=": size <= length,
            ">=": size >= length,
            "=": size == length,
        }[operator]
    if name not in PREFERENCES or operator != "=":
        return None
    return PREFERENCES[name] == value


def _length(value: str) -> float | None:
    """Return a length in pixels (`40em` is 640), if it is one."""
    found = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([a-z]*)", value)
    if found is None:
        return None
    amount, unit = float(found.group(1)), found.group(2)
    if unit in _PIXELS:
        return amount * _PIXELS[unit]
    return 0.0 if amount == 0 and not unit else None
