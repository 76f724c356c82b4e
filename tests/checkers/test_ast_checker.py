"""Behaviour of the AST checker that users rely on: BFCL's verified table, facets, options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.checkers import get_checker
from fcenv.checkers.ast_checker import FACETS, calls_from_bfcl, check
from fcenv.checkers.java_values import java_to_value
from fcenv.checkers.js_values import js_to_value
from fcenv.tasks import Task
from fcenv.handlers.base import Call, DecodeError

ROOT = Path(__file__).resolve().parents[2]  # the child process imports checkers from here
TRIANGLE = Task(
    id="simple_python_0",
    question=[],
    functions=[{"name": "calculate_triangle_area", "parameters": {"type": "dict", "properties": {
        "base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}},
        "required": ["base", "height"]}}],
    ground_truth=[{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}],
)
SOLVER = Task(
    id="simple_python_9",
    question=[],
    functions=[{"name": "integrate", "parameters": {"type": "dict", "properties": {
        "x_value": {"type": "float"}, "interval": {"type": "array", "items": {"type": "float"}},
        "point": {"type": "tuple", "items": {"type": "float"}},
        "filters": {"type": "dict"}}, "required": ["x_value"]}}],
    ground_truth=[{"integrate": {"x_value": [0.0], "interval": [[1.0, 3.0]], "point": [[33.4, -112.0], ""],
                                 "filters": [{"department": ["Science"], "school": ["Bluebird HS", ""]}, ""]}}],
)
SPOTIFY = Task(
    id="parallel_0",
    question=[],
    functions=[{"name": "spotify.play", "parameters": {"type": "dict", "properties": {
        "artist": {"type": "string"}, "duration": {"type": "integer"}}, "required": ["artist", "duration"]}}],
    ground_truth=[{"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}},
                  {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}}],
)


def verdict(task, calls, **options):
    result = check(task, calls, **options)
    return result.error_type if not result.valid else "valid"


def area(**args):
    return [Call("calculate_triangle_area", args)]


@pytest.mark.parametrize("calls, expected", [
    (area(base=10, height=5), "valid"),
    (area(base=10.0, height=5), "type_error:simple"),
    (area(base=True, height=5), "type_error:simple"),
    (area(base="10", height=5), "type_error:simple"),
    (area(), "simple_function_checker:missing_required"),
    (area(base=10, height=5, color="red"), "simple_function_checker:unexpected_param"),
    (area(base=10, height=5, unit="Units."), "valid"),
    (area(base=10, height=5, unit="metres"), "value_error:string"),
    (area(base=10, height=5) * 2, "simple_function_checker:wrong_count"),
    ([Call("triangle_area", {"base": 10, "height": 5})], "simple_function_checker:wrong_func_name"),
    (area(base=11, height=5), "value_error:others"),
])
def test_verified_table_simple(calls, expected):
    assert verdict(TRIANGLE, calls) == expected


@pytest.mark.parametrize("args, expected", [
    ({"x_value": 0}, "valid"),  # top-level int -> float
    ({"x_value": 0.0, "interval": [1, 3]}, "type_error:nested"),  # no coercion inside lists
    ({"x_value": 0.0, "interval": [3.0, 1.0]}, "value_error:list/tuple"),  # order-sensitive
    ({"x_value": 0.0, "interval": []}, "value_error:list/tuple"),
    ({"x_value": 0.0, "point": (33.4, -112.0)}, "valid"),
    ({"x_value": 0.0, "point": [33.4, -112.0]}, "valid"),
    ({"x_value": 0.0, "filters": {"department": "science"}}, "valid"),
    ({"x_value": 0.0, "filters": {"department": "Science", "extra": 1}}, "value_error:dict_key"),
    ({"x_value": 0.0, "filters": {}}, "value_error:dict_key"),
    ({"x_value": 0.0, "filters": {"department": "Art"}}, "value_error:dict_value"),
])
def test_verified_table_types(args, expected):
    args = {"interval": [1.0, 3.0], **args}
    assert verdict(SOLVER, [Call("integrate", args)]) == expected


def test_parallel_is_order_free_and_counts():
    swift = Call("spotify.play", {"artist": "taylor swift", "duration": 20})
    maroon = Call("spotify.play", {"artist": "Maroon 5", "duration": 15})
    assert verdict(SPOTIFY, [maroon, swift]) == "valid"
    assert verdict(SPOTIFY, [swift, maroon]) == "valid"
    assert verdict(SPOTIFY, [swift]) == "parallel_function_checker_no_order:wrong_count"
    wrong = Call("spotify.play", {"artist": "Adele", "duration": 15})
    assert verdict(SPOTIFY, [swift, wrong]) == "parallel_function_checker_no_order:cannot_find_match"


def test_underscore_to_dot_option():
    swift = Call("spotify_play", {"artist": "Taylor Swift", "duration": 20})
    maroon = Call("spotify_play", {"artist": "Maroon 5", "duration": 15})
    assert verdict(SPOTIFY, [swift, maroon], underscore_to_dot=True) == "valid"
    assert verdict(SPOTIFY, [swift, maroon]) != "valid"
    dotted = [Call("spotify.play", c.arguments) for c in (swift, maroon)]
    assert verdict(SPOTIFY, dotted, underscore_to_dot=True) != "valid"


def test_decode_error_maps_to_ast_decoder_and_zero_facets():
    result = get_checker("ast")(TRIANGLE, DecodeError("bad", "decoder_wrong_output_format"))
    assert (result.valid, result.error_type) == (False, "ast_decoder:decoder_wrong_output_format")
    assert result.facets == {name: 0.0 for name in FACETS}


def test_valid_means_every_facet_is_one():
    result = check(SPOTIFY, [Call("spotify.play", {"artist": "Maroon 5", "duration": 15}),
                             Call("spotify.play", {"artist": "Taylor Swift", "duration": 20})])
    assert result.valid and result.error_type is None
    assert result.facets == {name: 1.0 for name in FACETS}


def test_facets_rise_as_the_answer_improves():
    ladder = [
        [Call("other", {})],
        area(),
        area(base="10", height="5"),
        area(base=10),
        area(base="10", height=5),
        area(base=11, height=5),
        area(base=10, height=5),
    ]
    totals = []
    for calls in ladder:
        facets = check(TRIANGLE, calls).facets
        assert set(facets) == set(FACETS)
        assert all(0.0 <= v <= 1.0 for v in facets.values())
        totals.append(sum(facets.values()))
    assert totals == sorted(totals) and totals[0] < totals[-1]
    tripled = check(TRIANGLE, area(base=10, height=5) * 3).facets  # extra calls dilute every facet
    assert all(tripled[name] == pytest.approx(1 / 3) for name in ("function_name", "required_args", "types", "values"))
    hedged = check(TRIANGLE, area(base=10, height=5) + area(base=11, height=5)).facets
    assert sum(hedged.values()) < sum(check(TRIANGLE, area(base=11, height=5)).facets.values())


def test_java_and_javascript_values_convert_by_type():
    assert java_to_value("42L", "long") == 42 and java_to_value("42", "long") == "42"
    assert java_to_value("2.5f", "float") == 2.5 and java_to_value("2.5", "double") == 2.5
    assert java_to_value("new int[]{2, 7}", "Array", "integer") == [2, 7]
    assert java_to_value('new String[]{"a"}', "Array", "String") == ['"a"']  # BFCL keeps the quotes
    assert java_to_value('new ArrayList<>(Arrays.asList("a", "b"))', "ArrayList", "String") == ["a", "b"]
    assert java_to_value("'c'", "char") == "'c'"  # BFCL's char rule never matches
    with pytest.raises(NotImplementedError):
        java_to_value("x", "Set")
    assert js_to_value("10n", "Bigint") == 10 and js_to_value("[60, 30]", "array", "float") == [60.0, 30.0]
    assert js_to_value("{a: 'x', b: [1, 2]}", "dict") == {"a": "x", "b": [1, 2]}
    with pytest.raises(ValueError):
        js_to_value("x", "nope")


def test_unsupported_type_is_a_checker_error_not_a_crash():
    task = Task(id="simple_java_0", question=[], functions=[{"name": "f", "parameters": {
        "type": "dict", "properties": {"s": {"type": "Set"}}, "required": ["s"]}}],
        ground_truth=[{"f": {"s": ["x"]}}])
    result = check(task, [Call("f", {"s": "x"})])
    assert not result.valid and result.error_type == "checker_error:NotImplementedError"


def test_java_values_must_be_strings():
    task = Task(id="simple_java_1", question=[], functions=[{"name": "f", "parameters": {
        "type": "dict", "properties": {"n": {"type": "long"}}, "required": ["n"]}}], ground_truth=[{"f": {"n": [5]}}])
    assert verdict(task, [Call("f", {"n": "5L"})]) == "valid"
    assert verdict(task, [Call("f", {"n": "5"})]) == "type_error:simple"
    assert verdict(task, [Call("f", {"n": 5})]) == "type_error:java"


def test_calls_from_bfcl_shape():
    assert calls_from_bfcl([{"f": {"a": 1}}]) == [Call("f", {"a": 1})]
    assert calls_from_bfcl([]) == []
    for bad in ({}, [{"f": 1}], [{"f": {}, "g": {}}], [{}], "x"):
        with pytest.raises(DecodeError) as info:
            calls_from_bfcl(bad)
        assert info.value.kind == "decoder_wrong_output_format"


HOSTILE_CONVERSIONS = """
from fcenv.checkers.java_values import java_to_value
from fcenv.checkers.js_values import js_to_value
for value in ("new ArrayList<>(Arrays.asList(" * 20000, "[[" + "],[" * 50000, "new HashMap<" * 20000):
    java_to_value(value, "ArrayList", "String")
    java_to_value(value, "HashMap")
    js_to_value(value, "array", "integer")
    js_to_value(value, "dict")
"""


def test_hostile_values_stay_fast_and_safe():
    """Quadratic regex searches would hang here; the converters scan linearly (about 0.3 s).

    The conversions run in a child process with a generous limit: a regex search holds the GIL,
    so only a process can be stopped, and a regression fails the test instead of hanging it."""
    try:
        subprocess.run([sys.executable, "-c", HOSTILE_CONVERSIONS], cwd=ROOT, capture_output=True, text=True,
                       check=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("converting the hostile values took over 60 s (a scan gone quadratic?)")
    except subprocess.CalledProcessError as error:
        pytest.fail(f"converting the hostile values raised:\n{error.stderr[-3000:]}")
