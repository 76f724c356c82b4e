"""BFCL's prompting decoders for the return formats of its prompt variations (format sensitivity).

BFCL v4 prompts in one of four return formats (``python``, ``json``, ``verbose_xml``,
``concise_xml``), with or without a ``<TOOLCALL>`` tag around the calls; ``decode_format``
reads an answer as ``default_decode_ast_prompting(text, ReturnFormat(fmt), has_tool_call_tag)``
of bfcl-eval 2026.3.23 does (each ``read_*`` gives its format's rules). Output that is not
``{name: {arguments}}`` is ``decoder_wrong_output_format``, every other failure ``decoder_failed``.
Unlike BFCL, reading is bounded: ``first_call_array`` replaces its exponential regular
expression, expat refuses entity bombs. Docs: docs/evaluation.md#format-sensitivity-bfcl-v4.
"""

from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.bfcl_text import bracketed
from fcenv.handlers.python import decode as decode_python
from fcenv.handlers.python import decode_syntax_tree, parse_expression

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
TAG_OPEN, TAG_CLOSE = "<TOOLCALL>", "</TOOLCALL>"


def handler_name(return_format: str, tool_call_tag: bool) -> str:
    """The registered decoder of a return format (the untagged Python one is ``python``)."""
    if return_format not in RETURN_FORMATS:
        raise ValueError(f"unknown return format {return_format!r}; BFCL's are {', '.join(RETURN_FORMATS)}")
    name = "python" if return_format == "python" else f"bfcl_{return_format}"
    return name + "_tagged" if tool_call_tag else name


def between(text: str, opening: str, closing: str) -> tuple[int, int] | None:
    """Where ``opening(.*?)closing`` first matches (start of the opening, end of the closing).
    Found with two searches: a later opening never has a closing when the first has none."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else (start, end + len(closing))


def inside_tag(text: str) -> str:
    span = between(text, TAG_OPEN, TAG_CLOSE)
    if span is None:
        raise DecodeError("no <TOOLCALL>...</TOOLCALL> in the answer")
    return text[span[0] + len(TAG_OPEN):span[1] - len(TAG_CLOSE)].strip()


# --- python ---------------------------------------------------------------------------------


def read_python(source: str) -> list[Call]:
    """The text without wrapping single quotes is one call or a list, tuple or set of calls,
    read as the ``python`` decoder reads its calls. A Python literal too large to parse quickly
    (``fcenv.handlers.python.parse_expression``'s bound) fails where BFCL would read it."""
    # BFCL strips wrapping single quotes a model may have added; a tag's inside can be one
    # bare call or a set of calls as well as a list.
    return decode_syntax_tree(source.strip().strip("'"))


# --- json -----------------------------------------------------------------------------------


def first_call_array(text: str) -> str | None:
    """What ``re.search(r"\\[\\s*{.*?}\\s*(?:,\\s*{.*?}\\s*)*\\]", text, re.DOTALL)`` matches, in
    linear time. The match from a ``[`` is decided by where each ``{...}`` item may end: at the
    first ``}`` from which the rest still matches. ``rest[p]`` (the end of a match that goes
    on at ``p``, after an item and its spaces) and ``item_end[x]`` (the same for an item whose
    closing ``}`` lies at ``x`` or later, the first that works) depend only on later positions,
    so one pass from the end fills both. BFCL's regular expression backtracks exponentially on
    text such as ``[{}, {}, {}, ...`` without its closing bracket (30 items take minutes)."""
    if "{" not in text or "}" not in text or "]" not in text:
        return None
    n = len(text)
    solid = [n] * (n + 1)  # solid[k]: the first position >= k that is not whitespace (\s)
    for k in range(n - 1, -1, -1):
        solid[k] = solid[k + 1] if text[k].isspace() else k
    rest = [-1] * (n + 2)
    item_end = [-1] * (n + 2)
    for x in range(n - 1, -1, -1):
        char = text[x]
        if char == ",":  # another item: its spaces, "{", then the first "}" that lets the rest match
            brace = solid[x + 1]
            if brace < n and text[brace] == "{":
                rest[x] = item_end[brace + 1]
        elif char == "]":
            rest[x] = x + 1
        item_end[x] = item_end[x + 1]
        if char == "}" and rest[solid[x + 1]] >= 0:
            item_end[x] = rest[solid[x + 1]]
    for start in range(n):
        if text[start] == "[":
            brace = solid[start + 1]
            if brace < n and text[brace] == "{" and item_end[brace + 1] >= 0:
                return text[start:item_end[brace + 1]]
    return None


def read_json(source: str) -> list[Call]:
    """The span from the first ``[`` to the last ``]`` (when there is one), then the first
    ``[{...}, {...}]`` span BFCL's regular expression finds in it (when it finds one), parsed as
    JSON; text that is not JSON reads as *no calls* (BFCL returns ``[]``). Each object of the
    list gives ``{obj["function"]: obj["parameters"]}`` (a missing key fails), other items are
    skipped, a value that is not iterable fails."""
    start, end = source.find("["), source.rfind("]")
    if 0 <= start < end:  # BFCL's greedy r"\[.*\]"
        source = source[start:end + 1]
    source = first_call_array(source) or source
    try:
        data = json.loads(source)
    except json.JSONDecodeError:
        return []  # BFCL's JSON decoder reads text that is not JSON as no calls
    decoded = [{item["function"]: item["parameters"]} for item in iterate(data) if isinstance(item, dict)]
    for call in decoded:
        if type(next(iter(call.values()))) is not dict:
            raise DecodeError("the parameters of a call are not a JSON object", "decoder_wrong_output_format")
        if not isinstance(next(iter(call)), str):
            # BFCL keeps a null or numeric name, and its checker fails it as a wrong function name; a
            # Call's name is a str, so the verdict stays a failure and the error is the decoder's.
            raise DecodeError("the function name of a call is not a JSON string", "decoder_wrong_output_format")
    return [Call(name, dict(arguments)) for call in decoded for name, arguments in call.items()]


def iterate(data: Any) -> Any:
    if isinstance(data, (int, float)) or data is None:  # bool is an int
        raise DecodeError(f"the JSON is a {type(data).__name__}, not a list of calls")
    return data  # a string or an object iterates over characters or keys: no calls


# --- xml ------------------------------------------------------------------------------------


def xml_root(source: str) -> ET.Element:
    """The span from the first ``<functions>`` to the next ``</functions>`` parsed as XML (none
    fails), by expat 2.4 or later, which refuses entity-expansion bombs."""
    span = between(source, "<functions>", "</functions>")
    if span is None:
        raise DecodeError("no <functions>...</functions> in the answer")
    try:
        return ET.fromstring(source[span[0]:span[1]])
    except ET.ParseError as exc:
        raise DecodeError(f"not XML: {exc}") from None


def typed_value(raw: str, kind: str) -> Any:
    """BFCL's conversion of a parameter's text by its ``type`` attribute: integer, float,
    boolean, null, a Python literal for array/tuple/object/dict, the text otherwise."""
    if kind == "string":
        return raw
    if kind == "integer":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "boolean":
        return raw.lower() == "true"
    if kind == "null":
        return None
    if kind in ("array", "tuple", "object", "dict"):
        # ast.literal_eval of the text (which drops leading spaces and tabs), never eval.
        return ast.literal_eval(parse_expression(raw.lstrip(" \t")))
    return raw


def read_verbose_xml(source: str) -> list[Call]:
    """Each ``<function name=...>`` a call, each ``<param>`` (inside ``<params>`` if there is one)
    the ``value`` attribute converted by its ``type`` (``typed_value``)."""
    calls = []
    for function in xml_root(source).findall("function"):
        container = function.find("params")
        params = (container if container is not None else function).findall("param")
        arguments = {param.attrib.get("name"): typed_value(param.attrib.get("value", ""),
                                                           param.attrib.get("type", "string")) for param in params}
        calls.append(Call(function.attrib["name"], arguments))
    return calls


def read_concise_xml(source: str) -> list[Call]:
    """Each ``<function name=...>`` a call, each ``<param>`` its stripped text converted by its
    ``type`` (``typed_value``)."""
    calls = []
    for function in xml_root(source).findall("function"):
        arguments = {param.attrib["name"]: typed_value((param.text or "").strip(), param.attrib.get("type", "string"))
                     for param in function.findall("param")}
        calls.append(Call(function.attrib["name"], arguments))
    return calls


READERS: dict[str, Callable[[str], list[Call]]] = {
    "python": read_python, "json": read_json, "verbose_xml": read_verbose_xml, "concise_xml": read_concise_xml,
}


def decode_format(text: str, return_format: str, tool_call_tag: bool) -> list[Call]:
    """BFCL's reading of a prompting answer in ``return_format``, with or without the tag.

    Whatever the format, strip backticks, newlines and spaces at both ends and add ``[`` / ``]``
    where missing (``fcenv.handlers.bfcl_text.bracketed``); with the tag, keep the (stripped)
    text between the first ``<TOOLCALL>`` and the next ``</TOOLCALL>`` (no such pair fails);
    then the format's reader.
    """
    if return_format == "python" and not tool_call_tag:
        return decode_python(text)
    source = bracketed(text)
    if tool_call_tag:
        source = inside_tag(source)
    try:
        return READERS[return_format](source)
    except DecodeError:
        raise
    except (KeyError, TypeError, ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        # BFCL's readers raise on these texts too (a call object without "function", an XML
        # function without a name, "integer" text that is no integer), and its runner scores
        # any exception of a decoder as a failed decode.
        raise DecodeError(f"the answer does not read as {return_format} calls ({type(exc).__name__}: {exc})") from None


def _register(return_format: str, tool_call_tag: bool) -> None:
    register_handler(handler_name(return_format, tool_call_tag))(
        lambda text: decode_format(text, return_format, tool_call_tag))


for _format in RETURN_FORMATS:
    for _tag in (False, True):
        if (_format, _tag) != ("python", False):  # that one is the ``python`` decoder itself
            _register(_format, _tag)
