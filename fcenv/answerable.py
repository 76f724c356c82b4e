"""Can a correct answer pass this task? Checked when a file loads (``fcenv.data``).

A possible answer or a multi-turn ground truth that names what the entry's docs or its backends
do not have makes every answer fail, its own copy included, while partial credit still pays
copying the typo: such a task teaches and measures nothing. ``single_turn`` and ``multi_turn``
apply the rules by which BFCL's own checker fails every answer. A finding (``Unanswerable``) is
``refused`` (the loader raises ``DatasetError``) or only reported (``fcenv.data.DatasetWarning``)
where BFCL's own data breaks it: BFCL's files must load and score as BFCL scores them. Which
entries, and the warning: docs/troubleshooting.md#possible-answers-no-answer-can-pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fcenv.backends import backend_class
from fcenv.multi_turn.executor import parse_call_text, public_methods, signature
from fcenv.tasks import language_of

_BOTH_WAYS = "giving it is an unexpected parameter, leaving it out a missing one"
_TEXT = ("string", "any")  # types whose parameter may be given as "" (which then matches "" in the answer)


@dataclass(frozen=True)
class Unanswerable:
    """Why no answer can pass: the answer field at fault, and whether loading refuses it."""

    field: str
    message: str
    refused: bool


def single_turn(category: str, functions: list[dict[str, Any]], answer: list[dict[str, Any]]) -> list[Unanswerable]:
    """The findings on a possible answer ``[{function: {parameter: [acceptable values]}}]``.

    Refused: a call that names none of the entry's functions (in the simple categories, not the
    entry's first function: BFCL judges a single call against it). Reported only, since BFCL's
    own data breaks them in a few entries (live_multiple_862-181-3 and live_multiple_964-207-0
    expect parameters their docs lack; live_simple_106-63-0 and live_simple_112-68-0 give
    parameters no acceptable value; exec_multiple_45 expects ``price``): an expected parameter
    (its acceptable values do not include ``""``) missing from the function's doc; a parameter
    the doc requires missing from the answer, or in Python only let be left out (``""``), unless
    its type lets ``""`` itself be given; a parameter with no acceptable value. Otherwise giving
    it is an unexpected parameter (or a wrong value) and leaving it out a missing one.
    """
    docs = {doc["name"]: doc for doc in functions}
    simple = "parallel" not in category and "multiple" not in category
    found = []
    for index, call in enumerate(answer):
        (name, expected), = call.items()
        field = f"ground_truth[{index}].{name}"
        doc = docs.get(name)
        if doc is None:
            found.append(Unanswerable(field, f"calls {name!r}, which none of the entry's functions is "
                                             f"(its functions: {sorted(docs)})", True))
            continue
        if simple and functions[0]["name"] != name:
            found.append(Unanswerable(field, f"calls {name!r}, but BFCL judges the single call of this category "
                                             f"against the entry's first function, {functions[0]['name']!r}", True))
        parameters = doc["parameters"]
        properties = parameters["properties"]
        for parameter, acceptable in expected.items():
            if not acceptable:
                found.append(Unanswerable(f"{field}.{parameter}", "no acceptable value (any value given is wrong, "
                                                                  "leaving it out is a missing parameter)", False))
            elif parameter not in properties and "" not in acceptable:
                found.append(Unanswerable(f"{field}.{parameter}", f"expected, but the doc of {name!r} has no such "
                                                                  f"parameter ({_BOTH_WAYS})", False))
        for parameter in parameters.get("required", []):
            if parameter not in expected:
                found.append(Unanswerable(f"{field}.{parameter}", f"required by the doc of {name!r} but not in the "
                                                                  f"answer ({_BOTH_WAYS})", False))
            elif (expected[parameter] and all(value == "" for value in expected[parameter])
                  and language_of(category) == "python" and properties.get(parameter, {}).get("type") not in _TEXT):
                found.append(Unanswerable(f"{field}.{parameter}", f"required by the doc of {name!r}, but the answer "
                                                                  f"only lets it be left out (leaving it out is a "
                                                                  f"missing parameter, any value given is wrong)",
                                          False))
    return found


def multi_turn(involved_classes: list[str], ground_truth: list[list[str]]) -> list[Unanswerable]:
    """The findings on a multi-turn ground truth (call strings per turn, already readable).

    Refused: a call that names no public method of the involved classes, or whose arguments do
    not fit that method's parameters (the ground truth's own call fails, and only the same
    mistake can reproduce its result). No current BFCL entry breaks these; the retired
    multi_turn_composite set breaks them in dozens of entries (it calls
    ``view_messages_received``, passes ``send_message(sender_id=...)``) and was refused before
    them, for its 16 ground-truth calls that are not Python.
    """
    owners: dict[str, type] = {}
    for name in involved_classes:  # BFCL routes a name to the last involved class that has it
        cls = backend_class(name)
        owners.update(dict.fromkeys(public_methods(cls), cls))
    found = []
    for turn, calls in enumerate(ground_truth):
        for index, text in enumerate(calls):
            field = f"ground_truth[{turn}][{index}]"
            name, args, kwargs = parse_call_text(text)
            cls = owners.get(name)
            if cls is None:
                found.append(Unanswerable(field, f"calls {name!r}, a method none of the involved classes "
                                                 f"{list(involved_classes)} has", True))
                continue
            try:
                signature(cls, name).bind(*args, **kwargs)
            except TypeError as exc:
                names = ", ".join(signature(cls, name).parameters)
                found.append(Unanswerable(field, f"does not fit the parameters of {cls.__name__}.{name} ({names}): {exc}",
                                          True))
    return found
