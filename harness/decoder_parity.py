"""Decoder parity with BFCL: the texts, and the comparison with BFCL's decoders.

``python_texts`` renders BFCL's own possible answers (every Python AST category, live
included) as a model would write them, then mutates them: formatting (brackets, fences,
spaces, newlines, quotes, comments), prose around the calls, positional and duplicate
arguments, nested calls, operator expressions, unary quirks, tuples, and a pool of exotic or
hostile-ish syntax; ``arithmetic_texts`` adds random operator expressions (what BFCL hands to
eval). ``texts_for("java" | "javascript")`` renders simple_java and simple_javascript answers
in the language's syntax with the forms BFCL's data uses (``new ArrayList<>(Arrays.asList(..))``,
``new int[]{..}``, ``1L``, ``2.5f``, JS arrays, objects and arrow functions, ...), chosen by
the parameter's type, then varied the same way, with other value forms (double-brace
collections, casts, lambdas, text blocks, non-ASCII strings, which BFCL's Java parser cuts at
byte offsets) and a pool of exotic syntax.

``disagreements(oracle, texts, language)`` lists the texts on which our decoder and BFCL's
(op "decode_exact") differ: agreement means the same success or failure, the same failure kind
(``decoder_failed`` / ``decoder_wrong_output_format``) and the same decoded value with types,
tuples and key order. ``decode_or_error`` decodes as the env does, a failure being a value.
The parity tests (tests/parity/), the fast paths' tests (tests/handlers/) and
bench/bench_decode.py, bench/bench_check.py use them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from fcenv import handlers
from fcenv.handlers.base import DecodeError
from harness.oracle.typed import typed

PYTHON_CATEGORIES = (
    "simple_python", "multiple", "parallel", "parallel_multiple",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
)
SEED = 20260323


# ---- comparing with the reference ---------------------------------------------------------


def our_answer(text: str, language: str) -> dict[str, Any]:
    """Our decoder's result in the shape of the driver's ``decode_exact`` answer."""
    try:
        calls = handlers.decode(text, language)
    except DecodeError as exc:
        return {"ok": False, "kind": exc.kind}
    return {"ok": True, "kind": None, "decoded": typed([call.to_bfcl() for call in calls])}


def disagreements(oracle, texts: list[str], language: str) -> list[tuple[str, dict, dict]]:
    """Texts on which our decoder and BFCL's differ (one oracle batch for all of them)."""
    theirs = oracle.run([{"op": "decode_exact", "text": t, "language": language} for t in texts])
    found = []
    for text, reference in zip(texts, theirs):
        reference = {k: reference[k] for k in ("ok", "kind", "decoded") if k in reference}
        ours = our_answer(text, language)
        if ours != reference:
            found.append((text, ours, reference))
    return found


def report(found: list[tuple[str, dict, dict]], total: int) -> str:
    lines = [f"{len(found)} of {total} texts decode differently:"]
    for text, ours, reference in found[:15]:
        lines.append(f"  {text[:160]!r}\n    ours: {str(ours)[:200]}\n    BFCL: {str(reference)[:200]}")
    return "\n".join(lines)


def load_answers(bfcl_dir: Path, category: str) -> list[dict[str, Any]]:
    path = Path(bfcl_dir) / "possible_answer" / f"BFCL_v4_{category}.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def choose(acceptable: list[Any], rng: random.Random) -> Any:
    """One acceptable value of a possible answer, with acceptable values picked inside dicts."""
    choices = [value for value in acceptable if value != ""] or [""]
    value = rng.choice(choices)
    if isinstance(value, dict):
        return {k: choose(v, rng) if isinstance(v, list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [choose([v], rng) if isinstance(v, dict) else v for v in value]
    return value


def answer_calls(ground_truth: list[dict], rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for call in ground_truth:
        for name, params in call.items():
            arguments = {}
            for param, acceptable in params.items():
                if not isinstance(acceptable, list) or ("" in acceptable and rng.random() < 0.3):
                    continue
                arguments[param] = choose(acceptable, rng)
            calls.append((name, arguments))
    return calls


# ---- rendering Python ----------------------------------------------------------------------


def py_string(value: str, rng: random.Random) -> str:
    style = rng.random()
    if style < 0.5:
        return repr(value)
    if style < 0.85:
        return json.dumps(value, ensure_ascii=rng.random() < 0.3)  # JSON escapes are Python's
    if "'''" not in value and not value.endswith("'") and "\\" not in value:
        return "'''" + value + "'''"
    return repr(value)


def py_value(value: Any, rng: random.Random) -> str:
    if isinstance(value, str):
        return py_string(value, rng)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return rng.choice([str(value), str(value), f"{value:_}" if abs(value) > 9999 else str(value)])
    if isinstance(value, float):
        return rng.choice([repr(value), repr(value), f"{value:e}" if value else "0.0"])
    if isinstance(value, list):
        items = [py_value(v, rng) for v in value]
        if rng.random() < 0.15:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + rng.choice([", ", ",", " , "]).join(items) + "]"
    if isinstance(value, dict):
        pairs = [f"{py_value(k, rng)}: {py_value(v, rng)}" for k, v in value.items()]
        return "{" + ", ".join(pairs) + "}"
    return repr(value)


def py_call(name: str, arguments: dict[str, str], rng: random.Random) -> str:
    equals = rng.choice(["=", "=", "=", " = "])
    return f"{name}(" + rng.choice([", ", ","]).join(f"{k}{equals}{v}" for k, v in arguments.items()) + ")"


# Values a model may write that are not plain literals; BFCL's verdict on each differs.
EXOTIC_VALUES = [
    "+5", "-5", "not True", "~1", "--1", "-x", "-(1)", "-(1+2)", "-None", "-'a'", "-1j", "-...",
    "3+4", "2**10", "2**-1", "7//2", "7%3", "-7%3", "1<<3", "5&3", "5^3", "5|3", "1/0", "2@3",
    "'a'+'b'", "'ab'*3", "[1]+[2]", "[1]*3", "(1,)+(2,)", "{'a': 1}|{'b': 2}", "{1}|{2}",
    "True+True", "None+1", "1+x", "(1<2)+1", "[1,2][0]+1", "(1 if 0 else 2)+0", "(0 and 1/0)+1",
    "'%s-%d' % ('a', 3)", "'%5s|' % 'x'", "b'%s' % b'x'", "'abc'[::-1]+''", "1e308*10",
    "2.0**10000", "(-8)**0.5", "0**-1", "...+1", "[...]+[]", "[*'ab']+[]", "{**{'a': 1}}|{}",
    "g(1)", "g(b=1)", "g(1, b=2)", "mod.g(x='y')", "g(h(b=1))", "g(**k)", "g(*a)", "a.b(x=1).c(y=2)",
    "x[0]", "x['k']", "g(1)[0]", "x[1:2]", "[1,2][0]", "g(lambda: 1)", "g(f'{x}')", "x[1, 2]", "(a+b)[0]",
    "x[1:2, 3]", "(-x)[0]", "x[*a]", "x[:, 1]", "g(1)[2, 3]", "x[1, 2][3, 4]", "(lambda: 1)[0]", "x[(1,)]",
    "x", "None", "True", "...", "b'x'", "1j", "0x1F", "1_000", "'a' 'b'", "r'\\d'", "'\\x00'",
    "1e309", "-1e309", "(1, 2)", "()", "(1,)", "[]", "{}", "{1: 2}", "{(1, 2): 3}", "{x: 1}",
    "{1: 'a', True: 'b'}", "{[1]: 2}", "{g(b=1): 1}", "{**d}", "[*x]", "(*x,)", "{1, 2}",
    "lambda x: x", "[x for x in y]", "{k: v for k, v in y}", "f'x{y}'", "a.b", "g(1).h",
    "1<2", "True and False", "x if y else z", "(x:=1)", "await x", "not x", "'''a\nb'''",
    "[[[[[[[[[[1]]]]]]]]]]", "+".join(["1"] * 120), "9" * 4000, "0x" + "f" * 20000 + "+1",
    "'é' + 'ü'", "'\\N{BULLET}'", "\"it's\"", "'say \"hi\"'",
]


def mutate(calls: list[tuple[str, dict[str, str]]], rng: random.Random) -> str:
    """One model-like text for rendered calls, with a random formatting or content twist."""
    calls = [(name, dict(arguments)) for name, arguments in calls]
    twist = rng.randrange(18)
    if twist == 0 and calls and calls[0][1]:  # a positional argument
        name, arguments = calls[0]
        key = next(iter(arguments))
        value = arguments.pop(key)
        body = py_call(name, arguments, rng)
        calls_text = [body[:len(name) + 1] + value + (", " if arguments else "") + body[len(name) + 1:]]
        calls_text += [py_call(n, a, rng) for n, a in calls[1:]]
    else:
        if twist in (1, 2, 3) and calls:  # an exotic value in place of a real one
            name, arguments = rng.choice(calls)
            key = rng.choice(list(arguments) or ["extra"])
            arguments[key] = rng.choice(EXOTIC_VALUES)
        if twist == 4 and calls and calls[0][1]:  # a duplicated keyword
            name, arguments = calls[0]
            key = next(iter(arguments))
            calls[0] = (name, {**arguments, "__dup__": arguments[key]})
        if twist == 5 and calls:  # a second copy of a call, or a dotted name
            calls.append(calls[0] if rng.random() < 0.5 else ("pkg.mod." + calls[0][0], calls[0][1]))
        calls_text = [py_call(name, arguments, rng) for name, arguments in calls]
        if twist == 4 and "__dup__" in calls[0][1]:
            calls_text = [text.replace("__dup__", next(iter(calls[0][1])), 1) for text in calls_text]
    separator = rng.choice([", ", ",", ",\n", ", \n  ", " ,"])
    body = separator.join(calls_text)
    wrapped = "[" + body + "]"
    if twist == 6:
        wrapped = body  # no brackets
    elif twist == 7:
        wrapped = rng.choice(["```\n{}\n```", "```python\n{}\n```", "`{}`", "``{}``", "```{}```"]).format(wrapped)
    elif twist == 8:
        wrapped = rng.choice(["  {}  ", "\n\n{}\n", "\t{}", "{}\r\n", " \n{} \n ", "{}\n\n\n"]).format(wrapped)
    elif twist == 9:
        wrapped = rng.choice(["Sure! {}", "{} Done.", "Answer:\n{}", "{}\nI called it.", "'{}'"]).format(wrapped)
    elif twist == 10:
        wrapped = rng.choice(["{}  # the calls", "# plan\n{}", "{}\n# end"]).format(wrapped)
    elif twist == 11 and len(calls_text) > 1:
        wrapped = rng.choice(["\n", "; ", "\n\n"]).join(calls_text)
    elif twist == 12:
        wrapped = "(" + body + ")" if rng.random() < 0.5 else "[" + body + ",]"
    elif twist == 13:
        wrapped = rng.choice(["[{}]", "[[{}]]", "[{}], []", "[{}] + []", "{}()"]).format(body)
    return wrapped


def python_texts(bfcl_dir: Path) -> list[str]:
    rng = random.Random(SEED)
    texts: list[str] = []
    for category in PYTHON_CATEGORIES:
        for entry in load_answers(bfcl_dir, category):
            calls = answer_calls(entry["ground_truth"], rng)
            for _ in range(3):
                rendered = [(name, {k: py_value(v, rng) for k, v in args.items()}) for name, args in calls]
                texts.append(mutate(rendered, rng))
    for value in EXOTIC_VALUES:  # each exotic value once, in the simplest setting
        texts.append(f"[f(a={value})]")
    return texts


# ---- random operator expressions (what BFCL hands to eval) ---------------------------------

OPERANDS = [
    "0", "1", "2", "3", "-1", "7", "255", "10**3", "2**64", "0.5", "1.5", "-2.25", "1e300", "1e-300", "0.0", "3j",
    "True", "False", "None", "...", "'ab'", "'%s'", "'%d%%'", "''", "b'xy'", "[1, 2]", "[]", "(1,)", "()",
    "{'a': 1}", "{}", "{1, 2}", "[[1], [2]]", "'é'", '"q"', "1_0", "0x10", "0o7", "0b11", "[1, 'a', None]",
    "(1, (2, 3))", "{'k': [1]}", "'%(k)s'", "'abc'",
]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"]


def random_expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(OPERANDS)
    sub = lambda: random_expression(rng, depth - 1)  # noqa: E731
    kind = rng.random()
    if kind < 0.5:
        return f"({sub()} {rng.choice(BINARY)} {sub()})"
    if kind < 0.6:
        return f"({rng.choice(['-', '+', '~', 'not '])}{sub()})"
    if kind < 0.7:
        return f"({sub()} {rng.choice(['<', '<=', '>', '>=', '==', '!=', 'in', 'not in'])} {sub()})"
    if kind < 0.77:
        return f"({sub()} {rng.choice(['and', 'or'])} {sub()})"
    if kind < 0.83:
        return f"({sub()} if {sub()} else {sub()})"
    if kind < 0.9:
        return f"[{sub()}, {sub()}][{rng.choice(['0', '1', '-1', '0:1', '::-1', '5'])}]"
    if kind < 0.95:
        return f"[*{sub()}]"
    return f"{{{sub()}: {sub()}}}"


def arithmetic_texts(count: int) -> list[str]:
    """Operator expressions over literals, minus those our bounds refuse (BFCL would compute
    them, some for hours: ``1000 ** 2**64``)."""
    rng = random.Random(SEED + 1)
    texts = []
    while len(texts) < count:
        expression = random_expression(rng, rng.randrange(1, 5))
        text = f"[f(a={expression} {rng.choice(BINARY)} {random_expression(rng, 1)})]"
        try:
            handlers.decode(text, "python")
        except DecodeError as exc:
            if "too large" in str(exc) or "too costly" in str(exc):
                continue
        texts.append(text)
    return texts


# ---- decoding as the env does ----------------------------------------------------------------


def decode_or_error(decoder, text: str):
    """``decoder(text)``, or the ``DecodeError`` it raised; hostile text must surface as a
    decode failure, never escape."""
    try:
        return decoder(text)
    except DecodeError as exc:
        return exc
    except Exception as exc:
        return DecodeError(f"{type(exc).__name__}: {exc}")


# ---- Java and JavaScript -------------------------------------------------------------------

JAVA_JS_SEED = 8675309
VARIANTS_PER_ENTRY = {"java": 12, "javascript": 24}


def parameter_types(bfcl_dir: Path, category: str) -> dict[str, dict[str, tuple[str, str | None]]]:
    """entry id -> parameter -> (type, item type), from the question file."""
    types = {}
    for line in (Path(bfcl_dir) / f"BFCL_v4_{category}.json").read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            spec = entry["function"][0]["parameters"]["properties"]
            types[entry["id"]] = {p: (s["type"], s.get("items", {}).get("type")) for p, s in spec.items()}
    return types


def quoted(value: str, quote: str = '"') -> str:
    escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
    return quote + escaped + quote


# ---- Java ----------------------------------------------------------------------------------

JAVA_ELEMENT_TYPES = {"String": "String", "integer": "int", "long": "long", "char": "char", "any": "Object"}

JAVA_EXOTIC = [
    "1 + 2", "a.b(c, d)", "a . b ( c )", "Foo.class", "int.class", "Foo . class", "Foo.BAR", "a.b.c",
    "-1", "!true", "(int) 3", "(1)", "a ? b : c", "x -> x + 1", "(a, b) -> { return a; }",
    "String::valueOf", "arr[0]", "null", "this", "this.y", "super.y", "new Foo<Bar>()", "new a.b.Foo()",
    "new Foo(){}", "new Object[]{new Point(1, 2), new Point(3, 4)}", "{1, 2}", "i++", "y = 3",
    "(String) obj", "o instanceof Foo", "new int[3]", "new int[][]{{1,2},{3}}", "new int @A [] {1}",
    "'\\n'", "'\\''", '"""\n  text block\n  """', '"é"', '"\\u00e9"', '"a\\tb"', "0x1F", "1_000", "10d",
    "1.5e3", "2.5f", "-2.5f", "42L", "/* c */ 1", "1 /* c */", "switch (y) { default -> 1; }",
    "new Point(1 /* c */, 2)", "new HashMap<String, List<Integer>>()", "List.of(1, 2)",
    "Arrays.asList(1,2)", '"a" + "b"', "new int[]{1,2,}", "a.new B()", "new Foo(1){}.bar()",
    "new int[]{1}[0]", '"😀 ok"', "'é'", "@Foo 1", 'STR."x"', "new Point(new int[3])", "g(new int[3])",
    "(new int[3])", "x -> { }", "new <T>Foo()", "a.<T>b()", "Outer.Inner.class", "new Foo[0]",
    "new String[]{\"a\", \"b\"}", "new char[]{'a', 'b'}", "1 // c\n", "true ? 1 : 2", "~5", "a >>> 2",
]


def java_value(value: Any, types: tuple[str, str | None], rng: random.Random) -> str:
    kind, item = types
    if kind == "String" or (kind == "any" and isinstance(value, str) and rng.random() < 0.3):
        return quoted(str(value))
    if kind == "any" and isinstance(value, str):
        return value  # GT 'any' values are Java expressions or names
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "long":
        return f"{value}" + rng.choice(["L", "l", "L", ""])
    if kind == "float":
        return f"{value}" + rng.choice(["f", "F", ""])
    if kind == "double":
        return f"{value}" + rng.choice(["", "d", ""])
    if kind == "char":
        return f"'{value}'"
    if kind in ("Array", "ArrayList") and isinstance(value, list):
        elements = [java_value(v, (item or "any", None), rng) for v in value]
        joined = rng.choice([", ", ","]).join(elements)
        if kind == "Array":
            return f"new {JAVA_ELEMENT_TYPES.get(item, 'Object')}[]{{{joined}}}"
        generic = rng.choice(["<>", f"<{JAVA_ELEMENT_TYPES.get(item, 'Object')}>", ""])
        return rng.choice([
            f"new ArrayList{generic}(Arrays.asList({joined}))", f"new ArrayList{generic}(Arrays.asList({joined}))",
            f"Arrays.asList({joined})", f"List.of({joined})",
            f"new ArrayList{generic}() {{{{ " + " ".join(f"add({e});" for e in elements) + " }}",
        ])
    if kind == "HashMap" and isinstance(value, dict):
        puts = " ".join(f"put({quoted(str(k))}, {java_value(v, ('any', None), rng)});" for k, v in value.items())
        return rng.choice([f"new HashMap<String, Object>() {{{{ {puts} }}}}", "new HashMap<>()",
                           "Map.of(" + ", ".join(f"{quoted(str(k))}, {quoted(str(v))}" for k, v in value.items()) + ")"])
    if isinstance(value, list):
        return "new Object[]{" + ", ".join(java_value(v, ("any", None), rng) for v in value) + "}"
    if isinstance(value, dict):
        return "new HashMap<>()"
    return str(value)


def java_text(name: str, arguments: dict[str, str], rng: random.Random) -> str:
    arguments = dict(arguments)
    twist = rng.randrange(16)
    if twist == 0 and arguments:
        arguments[rng.choice(list(arguments))] = rng.choice(JAVA_EXOTIC)
    if twist == 1:  # non-ASCII before other values: BFCL's texts shift
        arguments = {"note": quoted(rng.choice(["café", "naïve", "日本", "😀"])), **arguments}
    pairs = [f"{k}{rng.choice(['=', '=', ' = '])}{v}" for k, v in arguments.items()]
    if twist == 2 and pairs:
        pairs.insert(rng.randrange(len(pairs) + 1), rng.choice(["x", "Foo.class", "1", '"s"', "a.b", "int.class"]))
    if twist == 3 and pairs:
        pairs.append(pairs[0])
    if twist == 4:
        pairs = [p.replace("=", "+=", 1) if rng.random() < 0.3 else p for p in pairs]
    call = f"{name}(" + rng.choice([", ", ","]).join(pairs) + ")"
    if twist == 5:
        call = rng.choice(["{c};", "{c}; other(y=1);", "{c}\nother(y=1)", "int r = {c};", "x = {c};",
                           "{c}, g(y=2)", "{c} // done", "/* call */ {c}", "{c};;"]).format(c=call)
    text = rng.choice(["[{}]", "{}", "{};", "[{};]", "{} ;"]).format(call)
    if twist == 6:
        text = rng.choice(["```\n{}\n```", "```java\n{}\n```", "  {}\n", "\n{}\n\n", "\t{}"]).format(text)
    elif twist == 7:
        text = rng.choice(["Sure: {}", "{} Done.", "'{}'", "{}\n"]).format(text)
    elif twist == 8:
        text = rng.choice(["new Foo({})", "class A {{ void m() {{ {}; }} }}", "if (ok) {};"]).format(call)
    return text


# ---- JavaScript ----------------------------------------------------------------------------

JS_EXOTIC = [
    "() => 1", "async () => { await y; }", "function(){return 1;}", "new Date()", "a.b(c)", "a . b",
    "-1", "null", "undefined", "`t ${a}`", "/re/g", "1n", "0x1F", "1e3", "a ? b : c", "!a", "typeof a",
    "[...a]", "{...a}", "class {}", "(1, 2)", "y=1", "'a\\'b'", '"a\\"b"', "<div/>", "[\n1,\n2\n]",
    "\"'q'\"", "'\"q\"'", "\"a\" + 'b'", '"a" + "b"', "/* c */ 1", "1 /* c */", "#a", "x => x * 2",
    '"é"', "{a: {b: [1, {c: 2}]}}", "new Map([[1, 2]])", "Symbol('s')", "a?.b", "a ?? b", "void 0",
    "import.meta", "await x", "...args", "'é' + \"ü\"", "[1, , 2]", "{'a': 1,}", "`multi\nline`",
    "x++", "a = b = 1", "(a) => ({a})", "function* g() {}", "new.target", "1_000", ".5", "0b101",
    '"😀"', "'\\u{1F600}'", "true", "false", "NaN", "Infinity", "-Infinity", "{}", "[]", "''", '""',
]


def js_value(value: Any, types: tuple[str, str | None], rng: random.Random) -> str:
    kind, item = types
    if isinstance(value, str):
        if kind == "any" and rng.random() < 0.6:
            return value  # GT 'any' values are mostly JavaScript expressions or names
        if kind == "Bigint":
            return value if value.endswith("n") else value + "n"
        return quoted(value, rng.choice(['"', "'"]))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return rng.choice([repr(value), repr(float(value)) if kind == "float" else repr(value)])
    if isinstance(value, list):
        elements = [js_value(v, (item or "any", None), rng) for v in value]
        joined = rng.choice([", ", ",", " , "]).join(elements)
        return rng.choice([f"[{joined}]", f"[{joined}]", f"new Array({joined})"])
    if isinstance(value, dict):
        pairs = []
        for key, val in value.items():
            shown = key if key.isidentifier() and rng.random() < 0.5 else quoted(key, rng.choice(['"', "'"]))
            pairs.append(f"{shown}: {js_value(val, ('any', None), rng)}")
        return "{" + rng.choice([", ", ","]).join(pairs) + "}"
    return "null" if value is None else str(value)


def js_text(name: str, arguments: dict[str, str], rng: random.Random) -> str:
    arguments = dict(arguments)
    twist = rng.randrange(16)
    if twist in (0, 1) and arguments:
        arguments[rng.choice(list(arguments))] = rng.choice(JS_EXOTIC)
    pairs = [f"{k}{rng.choice(['=', '=', ' = '])}{v}" for k, v in arguments.items()]
    if twist == 2 and pairs:
        pairs.insert(rng.randrange(len(pairs) + 1), rng.choice(["x", "true", "false", "null", "1", "'s'", "...rest"]))
    if twist == 3 and pairs:
        pairs.append(pairs[0])
    if twist == 4:
        pairs = [p.replace("=", "+=", 1) if rng.random() < 0.3 else p for p in pairs]
    call = f"{name}(" + rng.choice([", ", ","]).join(pairs) + ")"
    if twist == 5:
        call = rng.choice(["{c};", "{c}; other(y=1)", "{c}\nother(y=1)", "var r = {c}", "x = 1; {c}",
                           "{c}, g(y=2)", "{c} // done", "/* call */ {c}", "await {c}", "({c})", "{{{c}}}",
                           "'use strict'; {c}", "{c}(z=1)", "{c}.then(z=1)", "new {c}"]).format(c=call)
    if twist == 6:
        call = call.replace(f"{name}(", rng.choice([f"{name}?.(", f"obj.{name}(", f"a['{name}'](", f"{name} ("]), 1)
    text = rng.choice(["[{}]", "{}", "{};", "[{}];"]).format(call)
    if twist == 7:
        text = rng.choice(["```\n{}\n```", "```javascript\n{}\n```", "  {}\n", "\n{}\n\n", "\t{}"]).format(text)
    elif twist == 8:
        text = rng.choice(["Sure: {}", "{} Done.", "'{}'", "{}\n", "[{}, g(y=2)]"]).format(text)
    return text


# Where the grammars BFCL pins and ours parse differently, and the decoders emulate BFCL's
# (a skipped backslash in Java; in JavaScript a template literal on a new line, and a
# missing ")" after an argument that could start an arrow function's parameters).
JAVA_GRAMMAR_CASES = ["f(ke\\y=answer, value=Foo.BAR)", "f(a=(a, b)\\ -> { return a; })", "f(x=1)\\", "f(a=a.<\\T>b());"]
JS_GRAMMAR_CASES = [
    "f(a=1)\n`x`", "f(a=1)\r\n`x`", "f(a=1)/*\n*/`x`", "f(a=1)// c\n`x`", "f(a=1)\u2028`x`", "a\n`x`\n`y`",
    "a\n`x` `y`", "a `x`\n`y`", "```javascript\nf(a=1)\n```\n\n```javascript\nf(a=1)\n```",
    "```javascript\ngetUser(id=\"42\")\n```\n```js\ngetUser(id=\"43\")\n```",
] + [
    template.format(value)
    for value in ["[]", "{}", "{x}", "[x]", "{x: y}", "x => x", "(x) => x", "async () => 1", "y=x", "y=[]", "y=z=1",
                  "x", "1", "[1]", "a.b=1", "function(){}", "y=x=>x", "[x] = y", "() => 1"]
    for template in ["f(a={};", "f({};", "f(q=1, {};", "f(a={};\ng(b=2)", "f(a={}"]
]


def texts_for(language: str, bfcl_dir: Path) -> list[str]:
    category = f"simple_{language}"
    types = parameter_types(bfcl_dir, category)
    render, wrap = (java_value, java_text) if language == "java" else (js_value, js_text)
    rng = random.Random(JAVA_JS_SEED)
    texts = []
    for entry in load_answers(bfcl_dir, category):
        entry_types = types[entry["id"]]
        for _ in range(VARIANTS_PER_ENTRY[language]):
            for name, arguments in answer_calls(entry["ground_truth"], rng):
                rendered = {k: render(v, entry_types.get(k, ("any", None)), rng) for k, v in arguments.items()}
                texts.append(wrap(name, rendered, rng))
    exotic = JAVA_EXOTIC if language == "java" else JS_EXOTIC
    texts += [f"f(a={value})" for value in exotic] + [f"f(a={value});" for value in exotic]
    return texts + (JAVA_GRAMMAR_CASES if language == "java" else JS_GRAMMAR_CASES)
