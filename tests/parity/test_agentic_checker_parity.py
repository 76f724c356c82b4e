"""fcenv.checkers.agentic against BFCL's agentic_checker (run in the oracle venv), on answers to every
memory question in BFCL's format, right and wrong, and on hostile answers: punctuation the
standardisation removes or keeps, regex metacharacters, word boundaries, case and quotes,
unicode, huge texts, lists and values that are not strings."""

from __future__ import annotations

import json
import random

import pytest

from fcenv.checkers.agentic import check_answer

pytestmark = pytest.mark.oracle

HOSTILE_ANSWERS = [
    ["35"], ["thirty five"], ["$5.99"], ["C++"], ["a.b"], ["(x)"], ["50%"], ["it's"], ["New-York"], ["ÉCOLE"],
    ["ß"], [""], ["-"], ["*"], ["a|b"], ["[1]"], ["\\d+"], ["I do not know"], ["  spaced  "], ["çé"],
]
HOSTILE_RESPONSES = [
    "", "35", "1350", "I am 35.", "age:35", "thirty-five", "thirty five", "Thirty Five!", "$5.99", "5.99", "599",
    "C++ and C", "c", "ab", "a.b", "x", "(x)", "50%", "50 %", "it's", 'it"s', "its", "New York", "newyork",
    "école", "ÉCOLE", "STRASSE ß", "ss", "-", "*", "a|b", "ab|", "[1]", "1", "\\d+", "123",
    "{'answer': 'I do not know', 'context': 'I do not know'}", "  spaced  ", "spaced", "çé", "c\u0327e\u0301",
    "x" * 200000 + " 35", "\n35\n", "35\t", "_35_", "35_", "word35", "٣٥",
]
ODD_RESPONSES = [["35 years"], ["nope", "35"], 35, 35.0, None, True, {"answer": "35"}, [], [35], [None, "35"]]


@pytest.fixture(scope="module")
def memory_answers(bfcl_dir):
    path = bfcl_dir / "possible_answer" / "BFCL_v4_memory.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _ours(response, answers):
    try:
        result = check_answer(response, answers)
    except Exception as exc:
        return {"raised": type(exc).__name__}
    return {"valid": result.valid, "error_type": result.error_type}


def _theirs(answer):
    if "raised" in answer:
        return {"raised": answer["raised"].split(":")[0]}
    return {"valid": bool(answer["valid"]), "error_type": None if answer["valid"] else answer.get("error_type")}


def _compare(oracle, cases):
    answers = oracle.run([{"op": "agentic", "response": r, "possible_answers": a} for r, a in cases])
    problems = []
    for (response, acceptable), answer in zip(cases, answers):
        mine, ref = _ours(response, acceptable), _theirs(answer)
        if mine != ref:
            problems.append(f"{str(response)[:80]!r} vs {acceptable}: ours {mine}, reference {ref}")
    return problems


def test_memory_answers_match_reference(oracle, memory_answers):
    rng = random.Random(5)
    cases = []
    for entry in memory_answers:
        truth = entry["ground_truth"]
        other = rng.choice(memory_answers)["ground_truth"]
        for said in (truth[0], truth[-1].upper(), other[0]):
            cases.append((f"{{'answer': '{said}', 'context': 'from my memory'}}", truth))
            cases.append((said, truth))
        cases.append((entry["source"], truth))  # the passage the answer came from
        cases.append(("{'answer': 'I do not know', 'context': 'I do not know'}", truth))
    assert len(cases) > 1000
    problems = _compare(oracle, cases)
    assert sum(_ours(r, a)["valid"] for r, a in cases) > 400  # both outcomes are exercised
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:20])


def test_hostile_answers_match_reference(oracle):
    cases = [(response, answers) for response in HOSTILE_RESPONSES for answers in HOSTILE_ANSWERS]
    cases += [(response, ["35"]) for response in ODD_RESPONSES]
    cases += [("35", ["1", "35"]), ("35", []), ("", [""]), (" ", [""]), ("a", [""])]
    problems = _compare(oracle, cases)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:20])
