"""What users of the decoders rely on, handler by handler (BFCL's semantics included)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fcenv.handlers import available_handlers, decode, get_handler
from fcenv.handlers.base import Call, DecodeError


def calls(text: str, handler: str) -> list[tuple[str, dict]]:
    return [(call.name, call.arguments) for call in decode(text, handler)]


def failure_kind(text: str, handler: str) -> str:
    with pytest.raises(DecodeError) as info:
        decode(text, handler)
    return info.value.kind


def test_registry_has_the_built_in_handlers():
    assert {"python", "java", "javascript", "json", "tool_call", "auto"} <= set(available_handlers())
    assert get_handler("python") is get_handler("python")
    assert Call("f", {"a": 1}).to_bfcl() == {"f": {"a": 1}}


REGISTER_UNDER_A_BUILT_IN = {
    "decoder": ("from handlers import get_handler as look_up, register_handler\n"
                "register = lambda: register_handler('python')(lambda text: [])\n"
                "kept = lambda: look_up('python').__module__ == 'fcenv.handlers.python'\n"
                "other, built_in_module = 'json', 'fcenv.handlers.python'\n"),
    "source format": ("from fcenv.sources import get_format as look_up, register_format\n"
                      "register = lambda: register_format('xlam')(lambda record: None)\n"
                      "kept = lambda: look_up('xlam').read.__module__ == 'fcenv.sources.xlam'\n"
                      "other, built_in_module = 'openai', 'fcenv.sources.xlam'\n"),
}
FIRST = {"nothing": "", "another's lookup": "look_up(other)\n",
         "an import of the built-in's module": "import importlib; importlib.import_module(built_in_module)\n"}


@pytest.mark.parametrize("first", sorted(FIRST))
@pytest.mark.parametrize("kind", sorted(REGISTER_UNDER_A_BUILT_IN))
def test_registering_under_a_built_in_name_is_refused_whatever_came_first(kind, first):
    """One rule, in a fresh process, before any lookup or after one: the registration raises
    naming the name, and the built-in stays what the name looks up."""
    probe = (REGISTER_UNDER_A_BUILT_IN[kind] + FIRST[first]
             + "try:\n    register()\nexcept ValueError as exc:\n    print(exc)\n"
             + "print('built-in kept' if kept() else 'replaced')\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    name = "python" if kind == "decoder" else "xlam"
    assert f"{name!r} is already registered" in proc.stdout and "built-in kept" in proc.stdout, proc.stdout


# ---- python --------------------------------------------------------------------------------


def test_python_calls_with_and_without_brackets():
    assert calls("[f(a=1), mod.sub.g(b='x')]", "python") == [("f", {"a": 1}), ("mod.sub.g", {"b": "x"})]
    assert calls("f(a=1)", "python") == [("f", {"a": 1})]
    assert calls("f(a=1), g(b=2)", "python") == [("f", {"a": 1}), ("g", {"b": 2})]
    assert calls("[]", "python") == []
    assert calls("[f()]", "python") == [("f", {})]


def test_python_values_keep_exact_types_and_order():
    (name, arguments), = calls("[f(c=1, a=1.0, b=True, d=None, e=(1, [2, 3]), g={'k': (4,)}, h='s')]", "python")
    assert list(arguments) == ["c", "a", "b", "d", "e", "g", "h"]
    assert [type(v) for v in arguments.values()] == [int, float, bool, type(None), tuple, dict, str]
    assert arguments["e"] == (1, [2, 3]) and isinstance(arguments["e"][1], list)
    assert arguments["g"] == {"k": (4,)}


def test_python_positional_arguments_are_dropped_and_double_star_lands_under_none():
    assert calls("[f(1, 2, a=3)]", "python") == [("f", {"a": 3})]
    assert calls("[f(*args, **extra)]", "python") == [("f", {None: "extra"})]
    assert calls("[f(a=1, a=2)]", "python") == [("f", {"a": 2})]


def test_python_value_mapping_follows_bfcl():
    (_, arguments), = calls(
        "[f(a=x, b=g(1), c=g(k=1), d=x[0], e=..., f=-1.5, g=3+4*2, h='ab'*2, i=[1]+[2], j=2**-1)]", "python")
    assert arguments == {"a": "x", "b": "g(1)", "c": {"g": {"k": 1}}, "d": "x[0]", "e": "...", "f": -1.5,
                         "g": 11, "h": "abab", "i": [1, 2], "j": 0.5}
    assert calls('[f(a=g( "x" ))]', "python") == [("f", {"a": "g('x')"})]  # source text is re-printed


def test_python_unary_quirk_negates_whatever_the_operator():
    # BFCL negates the operand of any unary operator on a constant.
    assert calls("[f(a=+1, b=~1, c=not True, d=-True)]", "python") == [("f", {"a": -1, "b": -1, "c": -1, "d": -1})]
    # Inside an operator expression Python's own meaning applies.
    assert calls("[f(a=+1+0, b=(not True)+0)]", "python") == [("f", {"a": 1, "b": 0})]


def test_python_call_names():
    assert calls("[a.b.c(x=1)]", "python") == [("a.b.c", {"x": 1})]
    assert calls("[x[0](a=1)]", "python") == [("", {"a": 1})]
    assert calls("[a.b(x=1).c(y=2)]", "python") == [("c", {"y": 2})]


@pytest.mark.parametrize("text", [
    "```\n[f(a=1)]\n```", "  [f(a=1)]\n\n", "`f(a=1)`", "[f(a=1),]", "[f(a=1)]  # note", "[f(\n  a=1,\n)]",
])
def test_python_formatting_bfcl_accepts(text):
    assert calls(text, "python") == [("f", {"a": 1})]


@pytest.mark.parametrize("text", [
    "```python\n[f(a=1)]\n```", "Sure! [f(a=1)]", "[f(a=1)] Done.", "[f(a=1)]\n[g(b=2)]", "\t[f(a=1)]",
    "[f(a=1), 3]", "f", "3", "[f(a=lambda: 1)]", "[f(a={1, 2})]", "[f(a=b.c)]", "[f(a=f'{x}')]",
    "[f(a=[x for x in y])]", "[f(a=-x)]", "[f(a=1/0)]", "[f(a=None+1)]", "[f(a={[1]: 2})]", "[f(a={**d})]",
])
def test_python_texts_bfcl_rejects(text):
    assert failure_kind(text, "python") == "decoder_failed"


@pytest.mark.parametrize("text, expected", [
    (r"[f(a='\d+')]", {"a": "\\d+"}),
    ("[f(a=[1if 1 else 2])]", None),  # a number run into a keyword warns, then fails on IfExp
    ("[f(a=0x1for x in y)]", None),
    ("[f(a=1.5jor 2)]", None),
    ("[f(a='5th')]", {"a": "5th"}),
])
def test_python_parse_warnings_never_surface(text, expected, recwarn):
    # Python warns while parsing these; BFCL ignores that. Under warnings-as-errors (as in
    # many test setups) the verdict must not change, and nothing may be printed or raised.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if expected is None:
            assert failure_kind(text, "python") == "decoder_failed"
        else:
            assert calls(text, "python") == [("f", expected)]
    assert len(recwarn) == 0


def test_python_operator_expressions_beyond_literals_are_refused():
    # Documented divergence: BFCL's eval() gets 3, 'Ab' and 1 here; ours never calls anything.
    for text in ("[f(a=len('ab')+1)]", "[f(a='a'.upper()+'b')]", "[f(a=(1 is 1)+0)]", "[f(a=MAXIMUM_STEP_LIMIT+1)]"):
        assert failure_kind(text, "python") == "decoder_failed"


# ---- java ----------------------------------------------------------------------------------


def test_java_call_with_typed_values_as_strings():
    text = ('[Obj.method(name="a b", id=42L, rate=2.5f, ok=true, ids=new int[]{1, 2}, '
            'items=new ArrayList<>(Arrays.asList("x", "y")), c=\'q\', e=Foo.BAR, sum=1 + 2)]')
    (name, arguments), = calls(text, "java")
    assert name == "Obj.method"
    assert arguments == {"name": "a b", "id": "42L", "rate": "2.5f", "ok": "true", "ids": "new int[]{1,2}",
                         "items": 'new ArrayList<>(Arrays.asList("x", "y"))', "c": "q", "e": "Foo.BAR", "sum": "1+2"}


def test_java_rebuilds_creations_like_bfcl():
    (_, arguments), = calls(
        'f(m=new HashMap<String, Integer>() {{ put("a", 1); }}, p=new Point(1,2), a=new int[][]{{1}, {2}});', "java")
    assert arguments == {"m": "new HashMap<String,Integer>()", "p": "new Point(1, 2)", "a": "new int[]{{1},{2}}"}


def test_java_unnamed_arguments_and_duplicates():
    assert calls("f(Foo.class, y=1, 2, \"s\");", "java") == [("f", {None: "Foo.class", "y": "1"})]
    assert failure_kind("f(x, y);", "java") == "decoder_failed"
    assert failure_kind("f(a=1, a=2);", "java") == "decoder_failed"


def test_java_first_invocation_only_and_failure_kinds():
    assert calls("f(a=1); g(b=2);", "java") == [("f", {"a": "1"})]
    assert calls("int r = f(a=1);", "java") == [("f", {"a": "1"})]
    assert failure_kind("int a = 1;", "java") == "decoder_wrong_output_format"
    assert failure_kind("[]", "java") == "decoder_wrong_output_format"
    assert failure_kind("Sure, here it is", "java") == "decoder_failed"
    assert failure_kind("f(x=new int[3]);", "java") == "decoder_failed"  # BFCL trips over the missing initializer


def test_java_reproduces_bfcl_byte_offset_slicing():
    # BFCL cuts texts with UTF-8 byte offsets out of a str: after "é" everything shifts by one.
    assert calls('f(a="é", b=1);', "java") == [("f", {"a": 'é"', "=": ")"})]


def test_tree_sitter_parsers_are_built_lazily_and_reused():
    probe = ("import sys, handlers.java, handlers.javascript\n"
             "from handlers import tree_sitter_support as t\n"
             "assert not t._languages and 'tree_sitter_java' not in sys.modules\n"
             "fcenv.handlers.java.decode('f(a=1 + 2);'); handlers.java.decode('g(b=x - 1);')\n"  # past the fast path
             "assert list(t._languages) == ['java'] and len(t._local.parsers) == 1\n")
    subprocess.run([sys.executable, "-c", probe], check=True)


# ---- javascript ----------------------------------------------------------------------------


def test_javascript_call_with_source_text_values():
    text = "[fetch(url='https://x.y', opts={method: 'GET'}, list=[1, 2], cb=() => 1, n=10n, s=\"a\" + \"b\")]"
    assert calls(text, "javascript") == [("fetch", {
        "url": "https://x.y", "opts": "{method: 'GET'}", "list": "[1, 2]", "cb": "() => 1", "n": "10n", "s": 'a" + "b'})]


def test_javascript_first_top_level_call_statement():
    assert calls("x = 1; f(a=1); g(b=2)", "javascript") == [("f", {"a": "1"})]
    assert calls("f(true, false, null, z=2)", "javascript") == [("f", {None: "true", "z": "2"})]
    assert failure_kind("var r = f(a=1)", "javascript") == "decoder_wrong_output_format"
    assert failure_kind("f(x, y)", "javascript") == "decoder_failed"
    assert failure_kind("f(a=", "javascript") == "decoder_failed"


def test_javascript_template_on_a_new_line_starts_a_statement_as_in_bfcl():
    assert calls("```javascript\nf(a=1)\n```\n```javascript\ng(b=2)\n```", "javascript") == [("f", {"a": "1"})]
    assert calls("f(a=1)`x`;", "javascript") == [("f(a=1)", {})]  # same line: a tagged template


# ---- json, tool_call, auto -----------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '[{"function": "f", "parameters": {"a": 1}}]',
    '{"function": "f", "parameters": {"a": 1}}',
    '[{"name": "f", "arguments": {"a": 1}}]',
    '{"name": "f", "arguments": "{\\"a\\": 1}"}',
    '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]}',
    '```json\n[{"name": "f", "arguments": {"a": 1}}]\n```',
    'Calling now: [{"name": "f", "arguments": {"a": 1}}] as asked.',
])
def test_json_shapes(text):
    assert calls(text, "json") == [("f", {"a": 1})]


def test_json_failures_and_empty():
    assert calls("[]", "json") == []
    assert calls('{"name": "f"}', "json") == [("f", {})]
    assert failure_kind("not json", "json") == "decoder_failed"
    assert failure_kind('[{"name": "f", "arguments": "{oops"}]', "json") == "decoder_failed"
    assert failure_kind("[1, 2]", "json") == "decoder_wrong_output_format"
    assert failure_kind('[{"name": 3}]', "json") == "decoder_wrong_output_format"
    assert failure_kind('[{"name": "f", "arguments": [1]}]', "json") == "decoder_wrong_output_format"


def test_tool_call_blocks():
    text = ('I will look it up.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n'
            '<tool_call>{"name": "g", "arguments": "{\\"b\\": 2}"}</tool_call> thanks\n'
            '<tool_call>{"name": "h", "arguments": {}}')
    assert calls(text, "tool_call") == [("f", {"a": 1}), ("g", {"b": 2}), ("h", {})]
    assert failure_kind("no tags here", "tool_call") == "decoder_failed"
    assert failure_kind("<tool_call>{oops}</tool_call>", "tool_call") == "decoder_failed"
    assert failure_kind('<tool_call>{"arguments": {}}</tool_call>', "tool_call") == "decoder_wrong_output_format"


@pytest.mark.parametrize("text, expected", [
    ('<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>', [("f", {"a": 1})]),
    ('```json\n{"name": "f", "arguments": {"a": 1}}\n```', [("f", {"a": 1})]),
    ("[f(a=1)]", [("f", {"a": 1})]),
    ("Here you go:\n```python\n[f(a=1)]\n```\nAnything else?", [("f", {"a": 1})]),
    ('Sure.\n```\n{"name": "f", "arguments": {"a": 1}}\n```', [("f", {"a": 1})]),
    ("I will call the tool now.\n[f(a=1), g(b=2)]", [("f", {"a": 1}), ("g", {"b": 2})]),
    ("Let me check.\nf(a=1)\nThat should do it.", [("f", {"a": 1})]),
    ("[f(a=1)]\nThis looks up the weather.", [("f", {"a": 1})]),
])
def test_auto_finds_the_calls(text, expected):
    assert calls(text, "auto") == expected


def test_auto_reports_bfcl_failure_when_nothing_decodes():
    assert failure_kind("I cannot help with that.", "auto") == "decoder_failed"
    assert failure_kind("<tool_call>{broken", "auto") == "decoder_failed"
