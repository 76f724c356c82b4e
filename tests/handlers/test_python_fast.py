"""The Python decoder's fast path agrees with its syntax-tree path on every text it answers.

``fcenv.handlers.python_fast.read_calls`` answers most texts without ``ast``: calls (which must be
the very values the syntax-tree path builds, types included), a certain failure (which must
be a failure there too), or "not sure" (None). These tests hold it to that on the texts of
the parity tests, on fuzz texts, and on token soup: random runs of fragments chosen to sit on
every edge of its tokenizer (string prefixes, triple quotes, escapes, numbers glued to
letters, non-ASCII names, keywords, unbalanced brackets, prose).
"""

from __future__ import annotations

import random

import pytest

from fcenv.handlers.base import DecodeError
from fcenv.handlers.bfcl_text import bracketed
from fcenv.handlers.python import decode, decode_syntax_tree
from fcenv.handlers.python_fast import read_calls
from harness.decoder_parity import disagreements, python_texts, report
from harness.generators import generate

FRAGMENTS = [
    "[", "]", "(", ")", "{", "}", ",", ":", "=", "==", ".", "-", "+", "*", "**", "~", "!", "!=", "$", "?", "`",
    "#", "\\", ";", "@", "|", "->", ":=", "...", "f", "g.h", "a", "b", "r", "u", "rb", "F", "Br", "t", "x1", "_",
    "if", "else", "for", "in", "not", "is", "and", "or", "lambda", "None", "True", "False", "yield", "match",
    "print", "café", "año", "I", "cannot", "Sure", "Done", "python", "0", "00", "012", "7", "1.5", "1.", ".5",
    "1e5", "1e", "1E+3", "1_0", "0x1F", "1j", "1if", "-3", "123456789012345678901234567890",
    "'x'", '"y"', "''", '""', "'''", '"""', "'''a'b\nc'''", '"""x"""', "''''a'''", "''''''", "'a\\'b'", "'a\\nb'", "'it''s'", "'open", '"open', "'a\nb'",
    "'ü'", "'\t'", "'\x00'", "'\ud800'", "'\x0c'", "b'x'", "f'{x}'", "r'\\d'", "u'x'", "I'm", "can't",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\x0c", "\u00a0",
]


def agree(text: str) -> bool | None:
    """Whether the fast path and the syntax-tree path agree on ``text`` (None: not answered)."""
    try:
        source = bracketed(text).strip().strip("'")
    except DecodeError:
        return None
    try:
        fast = read_calls(source)
    except DecodeError:
        fast = "failed"
    if fast is None:
        return None
    try:
        slow = decode_syntax_tree(source)
    except DecodeError:
        slow = "failed"
    # repr tells 1 from 1.0 and True, and a tuple from a list.
    return repr(fast) == repr(slow)


def check_all(texts: list[str]) -> int:
    answered = 0
    for text in texts:
        verdict = agree(text)
        assert verdict is not False, f"fast path disagrees on {text!r}"
        answered += verdict is not None
    return answered


def test_fast_path_agrees_on_the_parity_texts(bfcl_dir):
    texts = [sample.text for sample in generate(bfcl_dir, seed=11, per_entry=2)
             if sample.task.language == "python" or sample.task.kind in ("relevance", "irrelevance")]
    answered = check_all(texts)
    # The point of the fast path: it answers almost every such text itself.
    assert answered > 0.95 * len(texts)


def test_fast_path_agrees_on_the_decoder_parity_corpus(bfcl_dir):
    """BFCL's answers written every way the decoder parity test writes them: quotes of every
    kind, exponents, wrappers, parentheses, garbage around and inside."""
    texts = python_texts(bfcl_dir)
    assert check_all(texts) > 0.5 * len(texts)


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_agrees_on_token_soup(seed):
    rng = random.Random(seed)
    texts = []
    for _ in range(5000):
        pieces = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 14))]
        glue = rng.choice(["", " ", ""])
        text = glue.join(pieces)
        texts.append(text)
        # The same soup inside a well-formed call, where the reader gets furthest.
        texts.append(f"[f(a={text}), g(b=[1, {text}])]")
    check_all(texts)


def test_fast_path_agrees_on_well_formed_calls():
    rng = random.Random(5)
    values = ["'x'", '"a b"', "''", "1", "-2", "3.5", "-0.0", "1e400", "True", "None", "name", "[]", "()", "(1)",
              "(1,)", "{}", "{'k': 1}", "{1: 'a', True: 'b'}", "{(1, 2): 3}", "[1, [2, (3,)]]", "{'a': [1, {'b': None}]}",
              "'ünïcode'", "'tab\there'", "[1,]", "( 'x' , )", "{'a':1,}", "00", "007.5"]
    texts = []
    for _ in range(3000):
        calls = []
        for _ in range(rng.randint(0, 3)):
            arguments = [f"{rng.choice(['a', 'b', 'c', 'match'])}={rng.choice(values)}" for _ in range(rng.randint(0, 4))]
            positional = [rng.choice(values) for _ in range(rng.randint(0, 1))]
            calls.append(f"{rng.choice(['f', 'm.g', 'a.b.c'])}({', '.join(positional + arguments)}{rng.choice(['', ','])})")
        sep = rng.choice([", ", ",", ",\n  "])
        texts.append(rng.choice(["[{}]", "{}", "```\n[{}]\n```", " [{}] "]).format(sep.join(calls)))
    answered = check_all(texts)
    assert answered > 0.9 * len(texts)


def test_fast_path_values_are_bfcls():
    """Values a user relies on, straight from ``decode``: types kept, duplicates overwritten."""
    [call] = decode("[m.f(1, a=-2, b=(1,), c=(1), d={'k': [1.5, None]}, a=3, e=x)]")
    assert call.name == "m.f"
    assert call.arguments == {"a": 3, "b": (1,), "c": 1, "d": {"k": [1.5, None]}, "e": "x"}
    assert list(call.arguments) == ["a", "b", "c", "d", "e"]
    assert type(call.arguments["b"]) is tuple


@pytest.mark.parametrize("text", [
    "Sure!", "I cannot help with that.", "None of the functions can be used.", "[f(a=1)] Done.",
    "```python\n[f(a=1)]\n```", "[f(", "[f(a=1]", "[f(a='open)]", "[f(a=1 b=2)]", "x = 1", "I'm sorry",
    "[a.b = 1]", "[f(a=b=1)]", "[f(), x=1]", "[f(a=[x =1])]", "[f(a=1) b =2]",
])
def test_certain_failures_are_failures(text):
    source = bracketed(text)
    with pytest.raises(DecodeError):
        read_calls(source)
    with pytest.raises(DecodeError):
        decode_syntax_tree(source)


@pytest.mark.parametrize("text", [
    "[f(a=b'x')]", "[f(a='''x\\ny''')]", "[f(a='a\\nb')]", "[f(a=1 if x else 2)]", "[f(a=g(b=1))]", "[f(a=1_000)]",
    "[f(a=café)]", "[f(*a)]", "[f(a=1)(b=2)]", "[f(a=-True)]",
])
def test_unsure_texts_go_to_the_syntax_tree(text):
    assert read_calls(bracketed(text)) is None


@pytest.mark.oracle
def test_fast_path_answers_are_bfcls(oracle):
    """Straight to the reference: every soup text the fast path answers decodes as in BFCL."""
    rng = random.Random(77)
    answered = []
    for _ in range(6000):
        text = rng.choice(["", " "]).join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 10)))
        for candidate in (text, f"[f(a={text}), g(b=[1, {text}])]"):
            if agree(candidate) is not None:
                answered.append(candidate)
    found = disagreements(oracle, answered, "python")
    assert not found, report(found, len(answered))
    assert len(answered) > 1000
