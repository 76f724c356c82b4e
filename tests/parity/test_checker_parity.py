"""Our single-turn checkers against BFCL's on the same decoded values.

Each generated text is decoded by the REFERENCE decoder (driver op "decode"); the same
decoded value goes to our checker and, end to end, the reference runner (op "single_safe"),
so disagreements can only come from the checkers. A second test compares our Java and
JavaScript value converters with BFCL's directly on fuzzed strings.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from fcenv.checkers import get_checker
from fcenv.checkers.ast_checker import calls_from_bfcl
from fcenv.checkers.java_values import java_to_value
from fcenv.checkers.js_values import js_to_value
from fcenv.handlers.base import DecodeError
from harness.generators import generate
from harness.oracle import from_jsonable, to_jsonable

pytestmark = pytest.mark.oracle


def _ours(sample, decode_answer):
    task = sample.task
    if decode_answer["ok"]:
        try:
            decoded = calls_from_bfcl(from_jsonable(decode_answer["decoded"]))
        except DecodeError as exc:
            decoded = exc
    else:
        decoded = DecodeError(decode_answer["error"], "decoder_failed")
    checker = get_checker(task.kind if task.kind in ("relevance", "irrelevance") else "ast")
    return checker(task, decoded)


def _request_pair(sample):
    task = sample.task
    language = "python" if task.kind in ("relevance", "irrelevance") else task.language
    return [
        {"op": "decode", "text": sample.text, "language": language},
        {"op": "single_safe", "text": sample.text, "category": task.category,
         "function": task.functions, "ground_truth": task.ground_truth},
    ]


def test_checker_verdicts_match_bfcl(oracle, bfcl_dir):
    samples = generate(bfcl_dir, seed=1234, per_entry=6)
    assert len(samples) >= 20_000
    answers = oracle.run([r for s in samples for r in _request_pair(s)])
    mismatches = []
    tally = Counter()
    for k, sample in enumerate(samples):
        decode_answer, reference = answers[2 * k], answers[2 * k + 1]
        ours = _ours(sample, decode_answer)
        tally[(sample.task.category, ours.valid)] += 1
        if "raised" in reference:  # BFCL's runner crashes on this entry: no verdict to match
            agree = not ours.valid and ours.error_type.startswith("checker_error:")
        else:
            agree = (ours.valid, ours.error_type) == (reference["valid"], reference["error_type"])
        if not agree:
            mismatches.append((sample.task.id, sample.mutation, sample.text[:200], reference, ours.error_type))
        if ours.valid and sample.task.kind == "ast":
            assert all(v == 1.0 for v in ours.facets.values()), (sample.task.id, ours.facets)
        assert all(0.0 <= v <= 1.0 for v in ours.facets.values())
    assert not mismatches, f"{len(mismatches)} of {len(samples)} disagree, e.g. {mismatches[:8]}"
    for category in {s.task.category for s in samples}:
        assert tally[(category, True)] > 0 and tally[(category, False)] > 0, (category, tally)


_JAVA_PIECES = ["new ArrayList<>(", "new ArrayList<String>(", "Arrays.asList(", "new ArrayList<>()", " {{ ", " }}",
                "add(", ");", ")", "(", "new int[]{", "new String[] {", "new HashMap<>()", "put(\"k\", ", '"', "'",
                "1", "2L", "1.5f", "2.5", "true", "x", ", ", ",", " ", "\n", "}", "{", ">", "<", "-3", "e5", "L"]
_JS_PIECES = ["[", "]", "[[", "]]", "{", "}", "{}", "new Array(", ")", ",", ", ", ": ", '"', "'", "1", "-2", "2.5",
              "10n", "true", "null", "a", '"k"', " ", "\n", "x.y", "-", "1e3"]
_JAVA_TYPES = [("integer", None), ("long", None), ("float", None), ("double", None), ("boolean", None),
               ("char", None), ("String", None), ("any", None), ("ArrayList", "String"), ("ArrayList", "integer"),
               ("ArrayList", "long"), ("ArrayList", None), ("Array", "String"), ("Array", "integer"), ("HashMap", None)]
_JS_TYPES = [("String", None), ("integer", None), ("float", None), ("Bigint", None), ("Boolean", None), ("any", None),
             ("dict", None), ("array", None), ("array", "String"), ("array", "float"), ("array", "dict")]
_JAVA_FORMS = ["new ArrayList<>(Arrays.asList({els}))", "new ArrayList<Integer>() {{{{ {adds} }}}}", "new int[]{{{els}}}",
               "new String[] {{{els}}}", "new HashMap<String, Object>() {{{{ {puts} }}}}", "{el}"]
_KEYS = ["a", '"b"', "c d", "1"]
_JS_FORMS = ["[{els}]", "new Array({els})", "[[{els}], [{els}]]", "{{{pairs}}}", "{el}"]


def _fuzz_value(rng, forms, elements, pieces):
    el = lambda: rng.choice(elements)  # noqa: E731
    text = rng.choice(forms).format(
        els=", ".join(el() for _ in range(rng.randint(0, 3))), el=el(),
        adds=" ".join(f"add({el()});" for _ in range(rng.randint(0, 3))),
        puts=" ".join(f'put("{rng.choice("kab")}", {el()});' for _ in range(rng.randint(0, 3))),
        pairs=", ".join(rng.choice(_KEYS) + ": " + el() for _ in range(rng.randint(0, 3))),
    )
    for _ in range(rng.randint(0, 2)):
        i = rng.randint(0, len(text))
        text = text[:i] + rng.choice(pieces) + text[i:]
    return text


def test_value_converters_match_bfcl(oracle):
    rng = random.Random(99)
    java_elements = ["1", "-2", '"a"', '"a,b"', "'c'", "3L", "1.5f", "2.5", "true", "x", "f(1)", '""', " 4 "]
    js_elements = ["1", "-2", '"a"', "'b'", '"a,b"', "2.5", "true", "x", "10n", "null", "[1, 2]", "{k: 1}", '""']
    requests = []
    for i in range(6000):
        if i % 2:
            value = _fuzz_value(rng, _JAVA_FORMS, java_elements, _JAVA_PIECES)
            declared, nested = rng.choice(_JAVA_TYPES)
            requests.append({"op": "convert", "language": "java", "value": value, "type": declared, "nested": nested})
        else:
            value = _fuzz_value(rng, _JS_FORMS, js_elements, _JS_PIECES)
            declared, nested = rng.choice(_JS_TYPES)
            requests.append({"op": "convert", "language": "javascript", "value": value, "type": declared, "nested": nested})
    answers = oracle.run(requests)
    mismatches = []
    for request, reference in zip(requests, answers):
        convert = java_to_value if request["language"] == "java" else js_to_value
        try:
            ours = {"value": to_jsonable(convert(request["value"], request["type"], request["nested"]))}
        except Exception as exc:
            ours = {"raised": f"{type(exc).__name__}: {exc}"}
        if ours != reference:
            mismatches.append((request, reference, ours))
    assert not mismatches, f"{len(mismatches)} of {len(requests)} disagree, e.g. {mismatches[:5]}"
