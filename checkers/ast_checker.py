"""BFCL's AST checker for single-turn entries (checker name ``"ast"``).

``check(task, decoded, *, underscore_to_dot=False)`` gives BFCL's verdict on decoded calls, with
BFCL's ``error_type`` names and messages (a ``DecodeError`` is ``ast_decoder:<kind>``):
``ast_check`` dispatches by category, ``check_call`` applies BFCL's rules in BFCL's order.
``underscore_to_dot=True`` is BFCL's rule for FC models whose tool names cannot hold dots (a
documented ``a.b`` is expected as ``a_b``). Where BFCL's own evaluation crashes there is no BFCL
verdict: ``valid=False`` with ``error_type="checker_error:<ExceptionName>"``. A failing answer's
partial-credit facets (``facets``): docs/environment.md#decoders-checkers-and-facets.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from fcenv.checkers import register_checker
from fcenv.checkers._bfcl_rules import Failure, check_type, check_value, resolve_type
from fcenv.checkers.result import CheckResult, LazyFacets
from fcenv.handlers.base import Call, DecodeError

# Each facet with its default weight in the shaped reward: values matter most, then picking
# the function and giving what it requires.
FACET_WEIGHTS = {"decodable": 1.0, "function_name": 2.0, "required_args": 2.0, "types": 1.0, "values": 3.0}
FACETS = tuple(FACET_WEIGHTS)
MATCHED_FACETS = ("function_name", "required_args", "types", "values")
# A valid answer has every facet right: one read-only mapping shared by all of them.
_ALL_RIGHT = MappingProxyType(dict.fromkeys(FACETS, 1.0))


@register_checker("ast", facets=FACET_WEIGHTS)
def check(task: Any, decoded: list[Call] | DecodeError, *, underscore_to_dot: bool = False) -> CheckResult:
    """BFCL's AST verdict on ``decoded`` for a single-turn ``task``, with reward facets."""
    if isinstance(decoded, DecodeError):
        return CheckResult(
            valid=False,
            error_type=f"ast_decoder:{decoded.kind}",
            errors=[f"Invalid syntax. Failed to decode AST. {decoded}"],
            facets=dict.fromkeys(FACETS, 0.0),
        )
    calls = list(decoded)
    language = task.language
    try:
        ast_check(task.functions, calls, task.ground_truth, language, task.category, underscore_to_dot)
    except Failure as failure:
        error_type, errors = failure.error_type, failure.errors
    # BFCL's runner crashes on these (an unknown parameter type, a Java ``Set``, a JS ``"10n\n"``
    # Bigint, an empty possible answer): no BFCL verdict exists.
    except Exception as exc:
        error_type, errors = f"checker_error:{type(exc).__name__}", [str(exc)]
    else:
        return CheckResult(True, None, [], _ALL_RIGHT)
    return CheckResult(False, error_type, errors,
                       LazyFacets(lambda: facets(task.functions, calls, task.ground_truth, language, underscore_to_dot)))


def ast_check(functions: list[dict], calls: list[Call], answers: list[dict], language: str,
              category: str, underscore_to_dot: bool = False) -> None:
    """BFCL's ``ast_checker``: returns when valid, raises ``Failure`` otherwise. Dispatch by
    category substring: ``parallel``, order-free greedy matching; ``multiple``, one call against
    the answer's function; else simple."""
    if "parallel" in category:
        return _parallel(functions, calls, answers, language, underscore_to_dot)
    if "multiple" in category:
        if len(calls) != len(answers):
            raise Failure("multiple_function_checker:wrong_count", ["Wrong number of functions."])
        doc = find_description(functions, next(iter(answers[0])))
        return check_call(doc, calls[0], answers[0], language, underscore_to_dot)
    if len(calls) != 1:
        raise Failure("simple_function_checker:wrong_count", ["Wrong number of functions."])
    return check_call(functions[0], calls[0], answers[0], language, underscore_to_dot)


def calls_from_bfcl(decoded: Any) -> list[Call]:
    """BFCL's decoded shape ``[{name: {param: value}}, ...]`` as calls.

    Anything else raises ``DecodeError(kind="decoder_wrong_output_format")``, BFCL's
    ``is_function_calling_format_output`` rule (a list of one-key dicts of dicts; ``[]`` passes).
    """
    if type(decoded) is not list or not all(
        type(item) is dict and len(item) == 1 and type(next(iter(item.values()))) is dict for item in decoded
    ):
        raise DecodeError("decoded output is not a list of {name: {arguments}} calls", "decoder_wrong_output_format")
    return [Call(name, dict(arguments)) for item in decoded for name, arguments in item.items()]


def find_description(functions: list[dict], name: str) -> dict | None:
    for doc in functions:
        if doc["name"] == name:
            return doc
    return None


def expected_name(doc: dict, underscore_to_dot: bool) -> str:
    name = doc["name"]
    return name.replace(".", "_") if underscore_to_dot and "." in name else name


def check_call(doc: dict, call: Call, answer: dict, language: str, underscore_to_dot: bool = False) -> None:
    """BFCL's ``simple_function_checker`` on one call; the first failed rule raises. The rules,
    in order: function name, required parameters, each given parameter (known, type, value),
    omitted parameters."""
    acceptable = next(iter(answer.values()))
    name = expected_name(doc, underscore_to_dot)
    if call.name != name:
        raise Failure("simple_function_checker:wrong_func_name", [f"Function name {name!r} not found in model output."])
    given = call.arguments
    properties = doc["parameters"]["properties"]
    for param in doc["parameters"]["required"]:
        if param not in given:
            raise Failure("simple_function_checker:missing_required", [f"Missing required parameter: {param!r}."])
    for param, value in given.items():
        if param not in properties or param not in acceptable:
            raise Failure("simple_function_checker:unexpected_param", [f"Unexpected parameter: {param!r}."])
        details, allowed = properties[param], acceptable[param]
        value, expected, nested = resolve_type(param, value, details, language)
        is_variable = check_type(param, value, allowed, details["type"], expected, nested)
        check_value(param, value, allowed, expected, nested, is_variable)
    for param, allowed in acceptable.items():
        if param not in given and "" not in allowed:
            raise Failure("simple_function_checker:missing_optional", [
                f"Optional parameter {param!r} not provided and not marked as optional."
            ])


def _parallel(functions: list[dict], calls: list[Call], answers: list[dict], language: str,
              underscore_to_dot: bool) -> None:
    """Order-free: each expected call greedily takes the first unmatched call that passes."""
    if len(calls) != len(answers):
        raise Failure("parallel_function_checker_no_order:wrong_count", ["Wrong number of functions."])
    matched: set[int] = set()
    for i, answer in enumerate(answers):
        doc = find_description(functions, next(iter(answer)))
        tried = []
        found = False
        for index, call in enumerate(calls):
            if index in matched:
                continue
            try:
                check_call(doc, call, answer, language, underscore_to_dot)
            except Failure as failure:
                tried.append({f"Model Result Index {index}": {
                    "sub_error": failure.errors, "sub_error_type": failure.error_type,
                    "model_output_item": call.to_bfcl(), "possible_answer_item": answer,
                }})
                continue
            matched.add(index)
            found = True
            break
        if not found:
            unmatched = [j for j in range(len(calls)) if j not in matched]
            raise Failure("parallel_function_checker_no_order:cannot_find_match", [
                f"Could not find a matching function among index {unmatched} of model output for index {i} "
                f"of possible answers.", *tried,
            ])


def facets(functions: list[dict], calls: list[Call], answers: Any, language: str,
           underscore_to_dot: bool = False) -> dict[str, float]:
    """Partial-credit facets, each in [0, 1] (1 = right); never raises on odd inputs.

    Computed only when the verdict is not valid (a valid answer has every facet at 1.0; a
    ``DecodeError`` gives all 0.0). ``decodable``: 1.0 (the text decoded into calls). The
    others: the model's calls are matched one to one with the expected calls (best-scoring pairs
    first, ``_call_scores``), and each facet is the sum over matched pairs divided by the larger
    of the number of calls made and expected. So every call beyond the expected ones dilutes
    every facet: listing alternatives ("[f(x=1), f(x=2)]" for one call) never pays, and a
    repeated call is matched once, so duplicating a call never stands in for a missing one. An
    entry with no expected calls scores them 1.0 when there are no calls, else 0.0; an answer
    with no calls where calls are expected scores 0.0 on every facet.
    """
    answers = answers if isinstance(answers, list) else []
    if answers and not calls:  # "[]" or an empty text where calls are needed: nothing is right
        return dict.fromkeys(FACETS, 0.0)
    scores = {"decodable": 1.0}
    if not answers:
        scores.update(dict.fromkeys(MATCHED_FACETS, 1.0 if not calls else 0.0))
        return scores
    # A repeated call says nothing new: only its first copy can be matched (the others still
    # count in the denominator), so duplicating a call never stands in for a missing one.
    firsts: dict[str, int] = {}
    for j, call in enumerate(calls):
        firsts.setdefault(_call_key(call, j), j)
    candidates = sorted(firsts.values())
    pairs = []
    for i, answer in enumerate(answers):
        doc = find_description(functions, next(iter(answer))) if isinstance(answer, dict) and len(answer) == 1 else None
        if doc is None:
            continue
        for j in candidates:
            call = calls[j]
            score = _call_scores(doc, call, answer, language, underscore_to_dot)
            if any(score):
                pairs.append((-sum(score), i, j, score))
    pairs.sort(key=lambda pair: pair[:3])
    totals = [0.0] * len(MATCHED_FACETS)
    taken_answers: set[int] = set()
    taken_calls: set[int] = set()
    for _, i, j, score in pairs:  # one to one, best pairs first
        if i not in taken_answers and j not in taken_calls:
            taken_answers.add(i)
            taken_calls.add(j)
            totals = [t + s for t, s in zip(totals, score)]
    denominator = max(len(calls), len(answers))
    scores.update({name: total / denominator for name, total in zip(MATCHED_FACETS, totals)})
    return scores


def _call_key(call: Call, index: int) -> str:
    try:
        ordered = sorted(call.arguments.items(), key=lambda item: (type(item[0]).__name__, str(item[0])))
        return f"{call.name}{ordered!r}"
    except (TypeError, ValueError):  # unorderable keys, an int too long to print: a unique call
        return f"#{index}"


def _call_scores(doc: dict, call: Call, answer: dict, language: str,
                 underscore_to_dot: bool) -> tuple[float, float, float, float]:
    """One pair's ``function_name`` (1.0 when the names match by BFCL's name rule, else 0.0),
    ``required_args`` (the share of the schema's required parameters present; 0.0 when the name
    is wrong, 1.0 when nothing is required), ``types`` (over the parameters given plus the
    expected ones that must be given, no ``""`` in the answer: the share given, known and of an
    acceptable type) and ``values`` (the share that also have an acceptable value); with no
    parameters to judge, ``types`` and ``values`` are 1.0 when the name matches."""
    if call.name != expected_name(doc, underscore_to_dot):
        return (0.0, 0.0, 0.0, 0.0)
    acceptable = next(iter(answer.values()))
    if not isinstance(acceptable, dict):
        return (1.0, 0.0, 0.0, 0.0)
    parameters = doc.get("parameters") or {}
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or []
    given = call.arguments
    required_score = sum(p in given for p in required) / len(required) if required else 1.0
    judged = set(given) | {p for p, allowed in acceptable.items() if isinstance(allowed, list) and "" not in allowed}
    if not judged:
        return (1.0, required_score, 1.0, 1.0)
    type_ok = value_ok = 0
    for param in judged:
        if param not in given or param not in properties or param not in acceptable:
            continue
        try:
            value, expected, nested = resolve_type(param, given[param], properties[param], language)
            is_variable = check_type(param, value, acceptable[param], properties[param]["type"], expected, nested)
        except Exception:
            continue
        type_ok += 1
        try:
            check_value(param, value, acceptable[param], expected, nested, is_variable)
        except Exception:
            continue
        value_ok += 1
    return (1.0, required_score, type_ok / len(judged), value_ok / len(judged))
