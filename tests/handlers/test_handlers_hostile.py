"""Hostile model text against every registered decoder.

Nothing in the text may run (injection attempts would create a marker file), no exception
other than ``DecodeError`` may escape, and every decode must come back: inputs are sized so
that a decoder that computes what it should refuse, recurses without bound or scans
quadratically would keep this test running for minutes or exhaust memory. No timing is
asserted.
"""

from __future__ import annotations

import pytest

from fcenv.handlers import available_handlers, decode
from fcenv.handlers.base import Call, DecodeError

DEEP = 20_000
TWO_MB = 2_000_000


def injection_texts(marker: str) -> list[str]:
    touch = f"__import__('os').system('touch {marker}')"
    return [
        f"[f(a={touch})]",
        f"[f(a={touch}+1)]",
        f"[f(a=(lambda: {touch})()+1)]",
        f"[f(a=[{touch}][0]+1)]",
        f"[f(a=eval(\"{touch}\")+1)]",
        f"[f(a=exec(\"import os; os.system('touch {marker}')\"))]",
        "[f(a=().__class__.__bases__[0].__subclasses__()+[])]",
        "[f(a=''.__class__.__mro__[1].__subclasses__()[0]+1)]",
        f"[f(a=[c for c in ().__class__.__base__.__subclasses__()]+[{touch}])]",
        f"[f(a=f'{{{touch}}}'+'')]",
        f"[f(a={{}}.get('x', {touch})+1)]",
        f"[f(a=__builtins__.__dict__['eval']('{touch}')+1)]",
        f'Runtime.getRuntime().exec(cmd="touch {marker}");',
        f"require('child_process').execSync(cmd='touch {marker}')",
        f'<tool_call>{{"name": "os.system", "arguments": {{"command": "touch {marker}"}}}}</tool_call>',
        f'[{{"name": "eval", "arguments": "{{\\"code\\": \\"{touch}\\"}}"}}]',
    ]


HOSTILE_TEXTS = {
    "2 MB of letters": "a" * TWO_MB,
    "2 MB string argument": '[f(a="' + "x" * TWO_MB + '")]',
    "2 MB string in an operator": '[f(a="' + "x" * TWO_MB + '"+"y")]',
    "2 MB of calls": "[" + "f(a=1)," * 300_000 + "]",
    "2 MB JSON string": '[{"name": "f", "arguments": {"a": "' + "x" * TWO_MB + '"}}]',
    "2 MB of random punctuation": ("([{<\"'`;,.=:/*\\#@!" * 120_000)[:TWO_MB],
    "deep brackets": "[" * DEEP + "]" * DEEP,
    "deep parentheses": "(" * DEEP + ")" * DEEP,
    "deep calls": "f(" * DEEP + ")" * DEEP,
    "deep argument": "[f(a=" + "[" * DEEP + "]" * DEEP + ")]",
    "deep braces": "{" * DEEP + "}" * DEEP,
    "deep JSON object": '{"a":' * DEEP + "1" + "}" * DEEP,
    "deep Java arrays": "f(x=" + "new int[]{" * DEEP + "}" * DEEP + ");",
    "deep Java value": "f(x=" + "(" * DEEP + "1" + ")" * DEEP + ");",
    "deep Java creations": "f(x=" + "new A(" * 5000 + ")" * 5000 + ");",
    "deep JavaScript value": "f(x=" + "[" * DEEP + "]" * DEEP + ")",
    "deep unary": "[f(a=" + "-" * DEEP + "1)]",
    "deep unary in an operator": "[f(a=1+" + "-" * DEEP + "1)]",
    "long operator chain": "[f(a=" + "1+" * DEEP + "1)]",
    "long attribute chain": "[" + "a." * DEEP + "b(x=1)]",
    "long not chain": "[f(a=" + "not " * DEEP + "1)]",
    "huge exponent": "[f(a=2**99999999999)]",
    "tower of exponents": "[f(a=9**9**9)]",
    "huge negative base": "[f(a=(-2)**99999999999)]",
    "float overflow": "[f(a=2.0**99999999999)]",
    "huge shift": "[f(a=1<<99999999999)]",
    "huge string repetition": "[f(a='a'*10**12)]",
    "huge list repetition": "[f(a=[1]*10**12)]",
    "nested repetition": "[f(a=[[[[0]*1000]*1000]*1000]*1000)]",
    "costly comparison": "[f(a=([[0]*2000]*2000 == [[0]*2000]*2000) + 1)]",
    "many medium repetitions": "[f(a=[" + ",".join(["[0]*900000"] * 50) + "]+[])]",
    "huge format width": "[f(a='%999999999d' % 1)]",
    "repeated format key": "[f(a='%(a)s' * 100000 % {'a': 'x' * 1000000})]",
    "many big multiplications": "[f(a=" + "*".join(["(3**80000)"] * 300) + ")]",
    "list of big multiplications": "[f(a=[" + ",".join(["3**80000*3**80000"] * 2000) + "]+[])]",
    "huge integer literal": "[f(a=" + "9" * 100_000 + ")]",
    "huge hex literal in an operator": "[f(a=0x" + "f" * 100_000 + "+1)]",
    "lone surrogate in a string": "[f(a='\ud800')]",
    "lone surrogate alone": "\udfff",
    "lone surrogate in Java": 'f(x="\ud800");',
    "lone surrogate in JSON": '[{"name": "f", "arguments": {"a": "\ud800"}}]',
    "escaped surrogate in JSON": '[{"name": "f", "arguments": {"a": "\\ud800"}}]',
    "NUL after the call": "[f(a=1)]\x00",
    "NUL bytes": "\x00" * 100_000,
    "NUL in a string": "[f(a='\x00')]",
    "NUL in JSON": '[{"name": "f\x00", "arguments": {}}]',
    "many tool_call tags": "<tool_call>" * 200_000,
    "many fences": "```\n" * 200_000,
    "many open lines": "[\n" * 500_000,
    "prose then open calls": "Sure\n" + "f(\n" * 300_000,
    "huge JSON integer": '[{"name": "f", "arguments": {"a": ' + "9" * 100_000 + "}}]",
    "tree-sitter error storm": "f(x=1) #" * 100_000,
    "many at signs": "@" * TWO_MB,
}


@pytest.fixture(scope="module")
def handler_names() -> list[str]:
    names = available_handlers()
    assert {"python", "java", "javascript", "json", "tool_call", "auto"} <= set(names)
    return names


def assert_calls_or_decode_error(text: str, handler: str) -> None:
    try:
        calls = decode(text, handler)
    except DecodeError as exc:
        assert exc.kind in ("decoder_failed", "decoder_wrong_output_format")
        return
    assert isinstance(calls, list) and all(isinstance(call, Call) for call in calls)


def test_injection_never_runs(tmp_path, handler_names):
    marker = tmp_path / "pwned"
    for text in injection_texts(str(marker)):
        for handler in handler_names:
            assert_calls_or_decode_error(text, handler)
    assert not marker.exists()


def test_injection_in_an_operator_is_refused(tmp_path):
    # BFCL evaluates operator expressions with eval(); ours must refuse the call inside.
    marker = tmp_path / "pwned"
    for text in injection_texts(str(marker))[1:5]:
        with pytest.raises(DecodeError):
            decode(text, "python")
    assert not marker.exists()


@pytest.mark.parametrize("name", sorted(HOSTILE_TEXTS))
def test_hostile_text_is_a_result_not_a_crash(name, handler_names):
    for handler in handler_names:
        assert_calls_or_decode_error(HOSTILE_TEXTS[name], handler)


@pytest.mark.parametrize("name", [
    "huge exponent", "tower of exponents", "huge shift", "huge string repetition", "huge list repetition",
    "nested repetition", "costly comparison", "many medium repetitions", "huge format width",
    "repeated format key", "many big multiplications", "list of big multiplications", "deep unary in an operator",
])
def test_explosive_arithmetic_fails_in_python(name):
    with pytest.raises(DecodeError):
        decode(HOSTILE_TEXTS[name], "python")


def test_non_text_input_is_a_decode_error(handler_names):
    for handler in handler_names:
        for value in (None, b"[f(a=1)]", 42, ["f(a=1)"]):
            with pytest.raises(DecodeError):
                decode(value, handler)  # type: ignore[arg-type]
