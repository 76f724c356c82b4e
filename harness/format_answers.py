"""Model answers in the return formats of BFCL's prompt variations, right and wrong.

``render_answer(calls, variation)`` writes calls as a model told that variation's prompt would
(Python list, fenced JSON, verbose or concise XML, inside ``<TOOLCALL>`` when asked).
``variation_texts(bfcl_dir, variation)`` renders the possible answers of the format-sensitivity
set's categories that way, mutated (``harness.generators.mutate``) and reformatted (prose around,
no fence, a missing or wrong tag, another format's answer, broken XML or JSON, odd types and
literal values), for the decoder parity tests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from fcenv.prompt_variations import PromptVariation
from harness.generators import answer_calls, load_category, mutate, render_python

SET_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
                  "live_parallel", "live_parallel_multiple")

_XML_TYPES = [(bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (list, "array"),
              (tuple, "tuple"), (dict, "dict"), (type(None), "null")]


def xml_type(value: Any) -> str:
    return next(name for kind, name in _XML_TYPES if isinstance(value, kind))


def xml_text(value: Any) -> str:
    if isinstance(value, (list, tuple, dict)):
        return repr(value)
    return "" if value is None else str(value)


def render_json(calls: list[tuple[str, dict]]) -> str:
    return "```json\n" + json.dumps([{"function": name, "parameters": args} for name, args in calls]) + "\n```"


def render_verbose_xml(calls: list[tuple[str, dict]]) -> str:
    functions = "".join(
        f"<function name={quoteattr(name)}><params>"
        + "".join(f"<param name={quoteattr(k)} value={quoteattr(xml_text(v))} type=\"{xml_type(v)}\"/>"
                  for k, v in args.items())
        + "</params></function>" for name, args in calls)
    return f"<functions>{functions}</functions>"


def render_concise_xml(calls: list[tuple[str, dict]]) -> str:
    functions = "".join(
        f"<function name={quoteattr(name)}>"
        + "".join(f"<param name={quoteattr(k)} type=\"{xml_type(v)}\">{escape(xml_text(v))}</param>"
                  for k, v in args.items())
        + "</function>" for name, args in calls)
    return f"<functions>{functions}</functions>"


RENDERERS = {"python": render_python, "json": render_json, "verbose_xml": render_verbose_xml,
             "concise_xml": render_concise_xml}


def render_answer(calls: list[tuple[str, dict]], variation: PromptVariation) -> str:
    body = RENDERERS[variation.return_format](calls)
    return f"<TOOLCALL>{body}</TOOLCALL>" if variation.tool_call_tag else body


# Texts every format must decode as BFCL does, hostile ones included.
ODD_TEXTS = [
    "", "[]", "I cannot help with that.", "<TOOLCALL></TOOLCALL>", "<TOOLCALL>[]</TOOLCALL>", "<TOOLCALL>",
    "<toolcall>[f(a=1)]</toolcall>", "<TOOLCALL>f(a=1)</TOOLCALL> and <TOOLCALL>g(b=2)</TOOLCALL>",
    "<TOOLCALL>{f(a=1), g(b=2)}</TOOLCALL>", "<TOOLCALL>'[f(a=1)]'</TOOLCALL>", "<TOOLCALL>(f(a=1), 2)</TOOLCALL>",
    '[{"function": "f", "parameters": {"a": 1}}]', '[{"function": "f"}]', '[{"function": "f", "parameters": [1]}]',
    '[{"function": ["f"], "parameters": {}}]', '{"function": "f", "parameters": {"a": 1}}', "[1, 2, 3]", "[5]",
    '"just a string"', "null", "true", "3.5", '[{"a": 1}, {"function": "g", "parameters": {}}]',
    '```json\n[{"function": "f", "parameters": {"a": NaN}}]\n```', '[{"function": "f", "parameters": {}}] [x]',
    'text [{"function": "f", "parameters": {"x": "]"}}, {"function": "g", "parameters": {}}] more ] text',
    '[{"function": "f", "parameters": {}}, {"bad" ] [{"function": "g", "parameters": {"k": [1, {"n": 2}]}}]',
    "[{}" + ", {}" * 40, "[{} , {},{ }]", '[ {"function": "f", "parameters": {"a": "}"}} ,\n {"function": "g", '
    '"parameters": {}}\t]',
    "<functions></functions>", "<functions><function name=\"f\"></function></functions>",
    "<functions><function><param name=\"a\" value=\"1\"/></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" value=\"1\" type=\"integer\"/></function></functions>",
    "<functions><function name=\"f\"><params><param value=\"1\"/></params></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"integer\">x</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"boolean\"> TRUE </param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"array\">[1, (2, 3)]</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"dict\">  {'k': None}</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"tuple\">__import__('os')</param></function>"
    "</functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"null\">x</param><param name=\"b\" type=\"weird\">"
    "y</param><param name=\"c\">z</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"float\">1e400</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"integer\">1_000</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\">&lt;tag&gt; &amp; more</param></function></functions>",
    "<functions><function name=\"f\"><param name=\"a\" type=\"string\"/></function>",
    "<functions><function name=\"f\"><unclosed></function></functions>", "```xml\n<functions><function "
    "name=\"f\"><params><param name=\"a\" value=\"[1,2]\" type=\"array\"/></params></function></functions>\n```",
    "<!DOCTYPE x [<!ENTITY e \"v\">]><functions><function name=\"&e;\"></function></functions>",
    "<functions><function name=\"f\"/><function name=\"g\"><params/></function><other name=\"h\"/></functions>",
]


def _variants(text: str, variation: PromptVariation, rng: random.Random) -> list[str]:
    """The text as models vary it: prose around, spaces, no tag, a doubled tag, no fence."""
    out = [f"Sure! Here you go:\n{text}\nHope this helps.", f"  \n`{text}`\n ", text.replace("```json\n", "")]
    if variation.tool_call_tag:
        inner = text[len("<TOOLCALL>"):-len("</TOOLCALL>")]
        out += [inner, f"<TOOLCALL>{inner}", f"<TOOLCALL>\n{inner}\n</TOOLCALL><TOOLCALL>[]</TOOLCALL>"]
    else:
        out.append(f"<TOOLCALL>{text}</TOOLCALL>")
    return rng.sample(out, 2)


def variation_texts(bfcl_dir: Path, variation: PromptVariation, seed: int = 0, per_category: int = 6) -> list[str]:
    """Rendered answers to entries of the set's categories in ``variation``'s format, right,
    mutated and reformatted, answers in the other formats, and ``ODD_TEXTS``."""
    rng = random.Random(f"{seed}-{variation.config}")
    texts = list(ODD_TEXTS)
    for category in SET_CATEGORIES:
        tasks = load_category(bfcl_dir, category)
        for task in rng.sample(tasks, min(per_category, len(tasks))):
            calls = answer_calls(task, rng, omit=rng.random() < 0.5)
            right = render_answer(calls, variation)
            _, wrong = mutate(task, calls, rng)
            other = PromptVariation(rng.choice(["python", "json", "verbose_xml", "concise_xml"]), rng.random() < 0.5)
            texts += [right, render_answer(wrong, variation), render_answer(calls, other),
                      *_variants(right, variation, rng)]
    return texts
