"""Reading the members of a request's `params`, with the errors a client should get."""

from collections.abc import Mapping
from typing import Any

from .errors import InvalidParams
from .jsonrpc import as_object


def params_object(params: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Return `params[key]` if it is an object (absent = empty).

    Raises:
        InvalidParams: it is present and not an object.
    """
    value = params.get(key)
    if value is None:
        return {}
    found = as_object(value)
    if found is None:
        raise InvalidParams(f"{key} must be an object")
    return found


def params_string(params: Mapping[str, Any], key: str) -> str:
    """Return the required string `params[key]`.

    Raises:
        InvalidParams: it is missing or not a string.
    """
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParams(f"{key} must be a string")
    return value
