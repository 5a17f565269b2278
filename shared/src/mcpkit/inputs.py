"""The questions a stateless-era handler asks the client, and the answers a retry brings.

In the 2026-07-28 era a handler that asks (`ctx.elicit`, `ctx.sample`, `ctx.roots`) ends
its attempt with an `InputRequiredResult`; the client answers and retries, and the
handler runs again from the top, finding its answers (`Inputs`). Earlier attempts'
answers travel sealed in `requestState` (`requeststate.py`).
"""

import hashlib
import json
from typing import Any, cast

from .context import INPUT_KEY
from .errors import InputRequired, InvalidParams, NoQuestionsHere
from .requeststate import RequestStates, binding

ASKING_METHODS = ("tools/call", "prompts/get", "resources/read")
"""The only methods whose handlers may ask the client something (MRTR)."""


class Inputs:
    """The answers a request brought for its handler's questions, and the next question.

    Questions are keyed as the handler names them (`ctx.ask_together`), else numbered in the
    order asked, with the question's digest: a question changed since (it names what would
    change) is asked again. Earlier attempts' answers come from `requestState`.
    """

    def __init__(self, method: str, answers: dict[str, Any]) -> None:
        self.method = method
        self.answers = answers
        self._asked = 0

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Return the client's answer to this question.

        Raises:
            InputRequired: it has not been answered yet: the client must answer and retry.
            NoQuestionsHere: the request's method cannot ask the client anything.
        """
        if self.method not in ASKING_METHODS:
            raise NoQuestionsHere(f"{self.method} cannot ask the client for input")
        self._asked += 1
        key = INPUT_KEY.get() or f"input-{self._asked}-{_digest(method, params)}"
        answer = self.answers.get(key)
        if answer is None:
            raise InputRequired({key: {"method": method, "params": params}}, self.answers)
        if not isinstance(answer, dict):
            raise InvalidParams(f"inputResponses[{key!r}] must be an object")
        return answer  # pyright: ignore[reportUnknownVariableType]


def _digest(method: str, params: dict[str, Any]) -> str:
    """A short digest of a question: its method and parameters."""
    asked = json.dumps([method, params], sort_keys=True, default=str).encode("utf-8", "replace")
    return hashlib.sha256(asked).hexdigest()[:12]


def gather_answers(states: RequestStates, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Return the answers a retried request carries: its requestState's, then its new ones.

    With a requestState, new answers count for the questions it asked and for no other:
    an answer sealed in it was replaced by one sent again. Others are ignored, as SEP-2322
    has unexpected input: a question still without its answer is asked again. Without a
    requestState the answers count as they come (SEP-2322 lets a client retry so): the
    once-only promise is the state's.

    Raises:
        InvalidParams: a malformed, forged or spent requestState, or malformed inputResponses.
    """
    given: object = params.get("inputResponses", {})
    if not isinstance(given, dict):
        raise InvalidParams("inputResponses must be an object")
    responses = cast(dict[str, Any], given)  # keys are strings: it came as JSON
    state = params.get("requestState")
    if state is None:
        return responses
    if not isinstance(state, str):
        raise InvalidParams("requestState must be a string")
    opened = states.open(state, binding(method, params))
    asked = {key: responses[key] for key in opened.asked if key in responses}
    return {**opened.answers, **asked}
