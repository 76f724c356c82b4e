"""BFCL's agentic checker (checker name ``"agentic"``): the memory and web-search categories.

An agentic answer is judged on its final message alone, the last step that holds no call:
``decoded`` is that message's text, or None when every step held calls (BFCL's
``agentic:no_last_message``, also for an empty final message; its runner gives ``agentic:inference_error`` when inference failed,
see ``fcenv.agentic.recorded``). The message passes when one of the acceptable answers occurs
in it as a whole word sequence, after both are standardised the same way: the characters
``, . / - _ * ^ ( )`` removed (whitespace kept, unlike the AST checker's strings), lower case,
single quotes made double. "Occurs" is BFCL's ``re.search(r"\\b<answer>\\b")``, so "35" is found
in "I am 35." but not in "1350", and an answer that standardises to nothing is found wherever a
word boundary is. A list answer is read as its first item, anything else as its ``str``.

Facets: ``answered`` (1.0 when there is a final message) and ``answer_found`` (1.0 when valid);
the second decides the verdict and weighs most.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from fcenv.checkers import register_checker
from fcenv.checkers.result import CheckResult

AGENTIC_FACETS = {"answered": 1.0, "answer_found": 3.0}
NOT_FOUND = "agentic:answer_not_found"
NO_LAST_MESSAGE = "agentic:no_last_message"
INFERENCE_ERROR = "agentic:inference_error"

_REMOVED = re.compile(r"[,./\-_*^()]")
_FOUND = MappingProxyType({"answered": 1.0, "answer_found": 1.0})
_MISSED = MappingProxyType({"answered": 1.0, "answer_found": 0.0})
_SILENT = MappingProxyType({"answered": 0.0, "answer_found": 0.0})


def standardize(text: str) -> str:
    return _REMOVED.sub("", text).lower().replace("'", '"')


def check_answer(response: Any, acceptable: list[str]) -> CheckResult:
    """BFCL's ``agentic_checker`` on one final message."""
    wanted = [standardize(answer) for answer in acceptable]
    if isinstance(response, list):
        response = response[0]  # an empty list fails here, as in BFCL (an IndexError)
    if not isinstance(response, str):
        response = str(response)
    said = standardize(response)
    if any(re.search(rf"\b{re.escape(answer)}\b", said) for answer in wanted):
        return CheckResult(True, None, [], _FOUND)
    return CheckResult(False, NOT_FOUND, ["None of the expected answers were found in the model response."],
                       _MISSED)


@register_checker("agentic", facets=AGENTIC_FACETS)
def check_agentic(task: Any, decoded: Any) -> CheckResult:
    """``decoded``: the final message's text, or None when no step ended without calls. An empty
    final message counts as none, as BFCL's runner tests the message's truth."""
    if not decoded:
        return CheckResult(False, NO_LAST_MESSAGE, ["Cannot find the last chat message that is not a function call."],
                           _SILENT)
    acceptable = task.ground_truth
    if not isinstance(acceptable, list) or not all(isinstance(answer, str) for answer in acceptable):
        # Not an agentic task's answers (BFCL's are a list of strings): the checker was given
        # another kind of task, and nothing the model says can pass it.
        return CheckResult(False, NOT_FOUND, ["the task holds no list of acceptable answers"], _MISSED)
    try:
        return check_answer(decoded, acceptable)
    except IndexError:  # an empty list for an answer: BFCL's runner would stop on it
        return CheckResult(False, NOT_FOUND, ["the final message is an empty list"], _MISSED)
