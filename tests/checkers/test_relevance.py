"""BFCL's relevance and irrelevance rules, with the checkers' facets."""

from __future__ import annotations

from fcenv.checkers import get_checker
from fcenv.tasks import Task
from fcenv.handlers.base import Call, DecodeError

IRRELEVANT = Task(id="irrelevance_3", question=[], functions=[{"name": "f", "parameters": {}}])
RELEVANT = Task(id="live_relevance_2-2-0", question=[], functions=[{"name": "f", "parameters": {}}])


def test_kinds_route_to_the_right_checker():
    assert IRRELEVANT.kind == "irrelevance" and RELEVANT.kind == "relevance"
    assert Task(id="live_irrelevance_10-1-0", question=[], functions=[]).kind == "irrelevance"


def test_irrelevance_passes_only_without_a_call():
    check = get_checker("irrelevance")
    for no_call in (DecodeError("prose"), DecodeError("shape", "decoder_wrong_output_format"), []):
        result = check(IRRELEVANT, no_call)
        assert (result.valid, result.error_type) == (True, None)
        assert result.facets["abstained"] == 1.0
    result = check(IRRELEVANT, [Call("anything", {"x": 1})])
    assert (result.valid, result.error_type) == (False, "irrelevance_error:decoder_success")
    assert result.facets == {"decodable": 1.0, "abstained": 0.0}


def test_relevance_passes_with_any_call():
    check = get_checker("relevance")
    result = check(RELEVANT, [Call("not_even_in_the_docs", {})])
    assert (result.valid, result.error_type) == (True, None)
    assert result.facets == {"decodable": 1.0, "called": 1.0}
    for no_call in (DecodeError("prose"), []):
        result = check(RELEVANT, no_call)
        assert (result.valid, result.error_type) == (False, "relevance_error:decoder_failed")
        assert result.facets["called"] == 0.0
    assert check(RELEVANT, DecodeError("prose")).facets["decodable"] == 0.0
    assert check(RELEVANT, []).facets["decodable"] == 1.0
