"""The Java and JavaScript decoders' fast paths agree with their tree-sitter paths.

``fcenv.handlers.java_fast.read_java_call`` and ``fcenv.handlers.javascript_fast.read_javascript_call``
answer plain calls without a syntax tree, or None. Whenever they answer, the call must be
exactly what the tree-sitter decoder gives for the same text (the parity tests then hold that
to BFCL). Checked on the parity texts and on soups of calls built from fragments at the edges
of the shapes: reserved words, suffixes, escapes, generics, short calls without ``;``, calls
joined by commas.
"""

from __future__ import annotations

import random

import pytest

import fcenv.handlers.java as java
import fcenv.handlers.javascript as javascript
from fcenv.handlers.base import DecodeError
from fcenv.handlers.bfcl_text import bracketed
from fcenv.handlers.java_fast import read_java_call
from fcenv.handlers.javascript_fast import read_javascript_call
from harness.decoder_parity import disagreements, report
from harness.generators import generate

READERS = {"java": (java, "read_java_call", read_java_call),
           "javascript": (javascript, "read_javascript_call", read_javascript_call)}

VALUES = {
    "java": ['"x"', '"a b, c"', '""', '"\\n"', "'c'", "1", "0", "-2", "- 3", "42L", "2.5f", "1.5", "3.0d", "012", "1e10",
             "0x1F", "1_000", "true", "false", "null", "x", "a.b.C", "a . b", "this", "class", "var", "String.class",
             "Arrays.asList(1, 2)", "List.of()", "a.b(c=1)", "new A()", "new A(1, \"s\")", "new java.util.ArrayList<>()",
             "new HashMap<String, Integer>()", "new ArrayList<>(Arrays.asList(1L, 2L))", "new int[]{1, 2}",
             "new String[]{\"a\", \"b\"}", "new int[3]", "new int[][]{{1}}", "new A() { }", "new A().b()",
             "new List<String>[]{}", "x -> x", "(int) 1", "a + b", "A::b", "new A(new B(new C()))", "f()", "x[0]",
             "B.class", "a.B.class", "int.class", "String[].class", "B.class.x", "10d", "2D", "0f", "record", "yield.x",
             "new record()", "to", "'ab'", "''", "new P('x y')", "new P('')", "new A() {{ f(1); g.h(\"x\"); }}",
             "new A() {{ }}", "new A() { int x; }", "new A() {{ f(1) }}", "new A() {{ f(a=1); }}"],
    "javascript": ['"x"', "'y'", '""', "'it\"s'", '"\\n"', "1", "-2", "1.5", "1.2.3", "012", "1e3", "true", "false",
                   "null", "undefined", "x", "a.b", "in", "await", "of", "[]", "[1, 'a']", "[1,]", "[[1]]", "{}",
                   "{k: 1}", "{'k': 'v', n: null}", "{k}", "{for: 1}", "{a: [1, {b: 'c'}]}", "[[1, [2]]]", "[{}, []]", "() => 1", "`t`", "/r/", "a + b", "f()",
                   "new A()", "a=b", "x?.y"],
}
NAMES = ["a", "b", "c", "key", "for", "class", "$x", "_", "a1", "value", "to", "from", "yield", "record"]
CALLEES = ["f", "A.f", "a.b.f", "Obj.method", "new", "f.class", "a .f", "record.f", "yield", "var.x"]


def tree_sitter_answer(language: str, text: str) -> str:
    module, name, reader = READERS[language]
    setattr(module, name, lambda code: None)  # the tree-sitter path alone
    try:
        return repr(module.decode(text))
    except DecodeError as exc:
        return f"DecodeError({exc.kind})"
    finally:
        setattr(module, name, reader)


def check_all(language: str, texts: list[str]) -> int:
    reader = READERS[language][2]
    answered = 0
    for text in texts:
        try:
            fast = reader(bracketed(text)[1:-1])
        except DecodeError as exc:
            fast = f"DecodeError({exc.kind})"
        if fast is None:
            continue
        answered += 1
        fast = fast if isinstance(fast, str) else repr(fast)
        assert fast == tree_sitter_answer(language, text), f"fast path disagrees on {text!r}"
    return answered


@pytest.mark.parametrize("language", ["java", "javascript"])
def test_fast_path_agrees_on_the_parity_texts(bfcl_dir, language):
    texts = [s.text for s in generate(bfcl_dir, seed=12, per_entry=3) if s.task.language == language]
    answered = check_all(language, texts)
    assert answered > 0.6 * len(texts)


def call_soup(language: str, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        arguments = [f"{rng.choice(NAMES)}{rng.choice(['=', ' = ', '=='])}{rng.choice(VALUES[language])}"
                     for _ in range(rng.randint(0, 3))]
        separator = rng.choice([", ", ",", ",\n"])
        ending = rng.choice(["", ";", " ;", ";;", "; x", ")"])
        text = f"{rng.choice(CALLEES)}({separator.join(arguments)})"
        if rng.random() < 0.2:  # calls joined by commas
            text += f", {rng.choice(CALLEES)}({rng.choice(arguments or [''])})"
        text += ending
        texts.append(rng.choice(["{}", "[{}]", " {} ", "```\n{}\n```"]).format(text))
    return texts


@pytest.mark.parametrize("language", ["java", "javascript"])
def test_fast_path_agrees_on_call_soup(language):
    assert check_all(language, call_soup(language, 3000, seed=len(language))) > 100


def fast_answered(language: str, texts: list[str]) -> list[str]:
    """The texts the fast path answers (calls, or a certain failure) instead of leaving to the parser."""
    reader = READERS[language][2]
    answered = []
    for text in texts:
        try:
            if reader(bracketed(text)[1:-1]) is None:
                continue
        except DecodeError:
            pass
        answered.append(text)
    return answered


@pytest.mark.oracle
@pytest.mark.parametrize("language", ["java", "javascript"])
def test_fast_path_answers_are_bfcls(oracle, language):
    """Straight to the reference: every soup text the fast path answers decodes as in BFCL."""
    answered = fast_answered(language, call_soup(language, 3000, seed=99))
    found = disagreements(oracle, answered, language)
    assert not found, report(found, len(answered))
    assert len(answered) > 100


# An unquoted string of words: one argument's value runs into a second operand on its line,
# then anything may follow (a fast path answers only where the parser must fail).
SECOND_OPERANDS = ["y", "World", "x.y", "1", "0x1", "2n", "1e5", '"s"', "'s'", "'open", '"open', "in", "of", "async",
                   "y => 1", "y\n", "1abc", "_", "$", "a$b", "y.z(1)", "y(", "y)", "y]", "y}", "x y z", "!", "!x",
                   "!= y", "! = y", ".3", ".3.4", ".x"]
# Where the broken value stands: an argument, or inside a call, a creation, an array, an object.
BROKEN_PLACES = ["{}", "{}", "g({})", "a.g(1, {})", "new A({})", "new int[]{{{}}}", "Arrays.asList({}, 2)", "[{}]",
                 "{{k: {}}}"]
AFTER_BROKEN = ["", ")", ");", ") x", ", b=1)", " z)", ")\n`t`", " => {", ")*/", "\n)", "`", "/", ")}", "//",
                " /* */)", "(", ")(", ") {", "}", "]"]


def broken_soup(language: str, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        arguments = [f"{rng.choice(NAMES)}{rng.choice(['=', ' = '])}{rng.choice(VALUES[language])}"
                     for _ in range(rng.randint(0, 2))]
        broken = rng.choice(VALUES[language]) + rng.choice([" ", "\t", "  ", ""]) + rng.choice(SECOND_OPERANDS)
        arguments.insert(rng.randint(0, len(arguments)), rng.choice(NAMES) + "=" + rng.choice(BROKEN_PLACES).format(broken))
        text = f"{rng.choice(CALLEES)}({', '.join(arguments)}{rng.choice(AFTER_BROKEN)}"
        texts.append(rng.choice(["{}", "[{}]", "```\n{}\n```"]).format(text))
    return texts


def joined_soup(language: str, count: int, seed: int) -> list[str]:
    """Calls joined by commas, then anything."""
    rng = random.Random(seed)
    calls = call_soup(language, count, seed)
    commas = [",", ", ", " ,", ",\n"]
    return [rng.choice(calls) + rng.choice(commas) + rng.choice(calls + AFTER_BROKEN) for _ in range(count)]


@pytest.mark.parametrize("language", ["java", "javascript"])
def test_fast_path_agrees_on_broken_values(language):
    assert check_all(language, broken_soup(language, 30000, seed=5)) > 300


def test_java_fast_path_agrees_on_joined_calls():
    assert check_all("java", joined_soup("java", 5000, seed=6)) > 100


@pytest.mark.oracle
@pytest.mark.parametrize("language", ["java", "javascript"])
def test_fast_path_failures_are_bfcls(oracle, language):
    answered = fast_answered(language, broken_soup(language, 30000, seed=98) + joined_soup(language, 3000, seed=97))
    found = disagreements(oracle, answered, language)
    assert not found, report(found, len(answered))
    assert len(answered) > 300


def test_short_java_calls_without_semicolon_are_left_to_the_parser():
    # Tree-sitter rejects ``f(a=1)`` but accepts ``f(a=1, b=2)``: that edge is not guessed.
    assert read_java_call("f(a=1)") is None
    assert read_java_call("f(a=1);") is not None
    with pytest.raises(DecodeError):
        java.decode("f(a=1)")


def test_java_values_render_as_bfcl_does():
    [call] = java.decode('A.b(x=new ArrayList<>(Arrays.asList(1L,  2L)), y=new String[]{"p", "q r"}, z=- 5, w="s");')
    assert call.name == "A.b"
    assert call.arguments == {"x": "new ArrayList<>(Arrays.asList(1L,  2L))", "y": 'new String[]{"p","q r"}',
                              "z": "-5", "w": "s"}


def test_java_calls_without_semicolon_agree_at_every_length():
    rng = random.Random(3)
    texts = []
    for length in range(1, 30):
        for _ in range(20):
            name = "f" * rng.randint(1, 3) + rng.choice(["", ".g", ".hh"])
            value = rng.choice(['"' + "s" * length + '"', "1" * min(length, 9) or "0", "x" * length, "true", "-" + "7" * min(length, 9)])
            arguments = rng.choice([f"a={value}", f"a={value}, b=1", f"a={value},\nb=2", ""])
            texts.append(f"{name}({arguments})")
    assert check_all("java", texts) > 150
