"""BFCL v4's prompt variations: the 26 system prompts of its format-sensitivity set.

A variation is named as BFCL names it, ``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json
&prompt_fmt=plaintext&style=classic``: the return format the model is told to answer in (and
which decoder reads the answer), whether the calls go inside ``<TOOLCALL>`` tags, how the
function docs are written (JSON, Python docstrings or XML), plain text or Markdown sections, and
the classic or experimental wording. ``PromptVariation.system_prompt`` renders the prompt
character for character as bfcl-eval 2026.3.23's ``formulate_system_prompt`` does (the default
variation is ``fcenv.prompts.BFCL_SYSTEM_PROMPT``); ``handler`` names the decoder that reads the
answer as BFCL's runner does for that variation (``fcenv.handlers.bfcl_formats``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fcenv.handlers.bfcl_formats import handler_name

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
DOC_FORMATS = ("python", "xml", "json")
PROMPT_FORMATS = ("plaintext", "markdown")
STYLES = ("classic", "experimental")
DEFAULT_CONFIG = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"

_CONFIG = re.compile(
    rf"ret_fmt=({'|'.join(RETURN_FORMATS)})&tool_call_tag=(True|False)&func_doc_fmt=({'|'.join(DOC_FORMATS)})"
    rf"&prompt_fmt=({'|'.join(PROMPT_FORMATS)})&style=({'|'.join(STYLES)})")


def format_sensitivity_configs() -> list[str]:
    """BFCL's 26 configurations, in its order: each return format with and without the tag, for
    each doc format, in plain text and classic wording; then Markdown, then the experimental
    wording (both on the default's other choices)."""
    configs = [f"ret_fmt={ret}&tool_call_tag={tag}&func_doc_fmt={doc}&prompt_fmt=plaintext&style=classic"
               for ret in RETURN_FORMATS for tag in ("True", "False") for doc in DOC_FORMATS]
    base = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json"
    return configs + [f"{base}&prompt_fmt=markdown&style=classic", f"{base}&prompt_fmt=plaintext&style=experimental"]


# --- BFCL's wording (the text is BFCL's: the prompt must be the one its models are scored on) --

ANSWER_SHAPES = {
    "python": "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]",
    "json": '```json\n[{"function":"func_name1","parameters":{"param1":"value1","param2":"value2"...}},'
            '{"function":"func_name2","parameters":{"param":"value"}}]\n```',
    "verbose_xml": '<functions><function name="func_name1"><params><param name="param1" value="value1" '
                   'type="type1"/><param name="param2" value="value2" type="type2"/>...</params></function>'
                   '<function name="func_name2"><params><param name="param3" value="value3" type="type3"/>'
                   '</params></function></functions>',
    "concise_xml": '<functions><function name="func_name1"><param name="param1" type="type1">value1</param>'
                   '<param name="param2" type="type2">value2</param>...</function><function name="func_name2">'
                   '<param name="param3" type="type3">value</param></function></functions>',
}
_XML_TYPES = ("The type fields of the parameters in your function calls must be one of: string, integer, float, "
              "boolean, array, dict, or tuple.")
TYPE_NOTES = {"python": "", "json": "", "verbose_xml": _XML_TYPES, "concise_xml": _XML_TYPES}


@dataclass(frozen=True)
class Wording:
    persona: str
    task: str
    untagged: str  # how to answer, without the tag: {shape} and {types} filled in
    tagged: str
    turns: str
    tools: str  # {format} and {functions} filled in


WORDINGS = {
    "classic": Wording(
        persona="You are an expert in composing functions.",
        task="You are given a question and a set of possible functions. Based on the question, you will need to make "
             "one or more function/tool calls to achieve the purpose. If none of the functions can be used, point it "
             "out. If the given question lacks the parameters required by the function, also point it out.",
        untagged="You should only return the function calls in your response.\n\nIf you decide to invoke any of the "
                 "function(s), you MUST put it in the format of {shape}. {types} You SHOULD NOT include any other "
                 "text in the response.",
        tagged="You should only return the function calls in the <TOOLCALL> section. If you decide to invoke any of "
               "the function(s), you MUST put it in the format of <TOOLCALL>{shape}</TOOLCALL>. {types} You SHOULD "
               "NOT include any other text in the response.",
        turns="At each turn, you should try your best to complete the tasks requested by the user within the current "
              "turn. Continue to output functions to call until you have fulfilled the user's request to the best of "
              "your ability. Once you have no more functions to call, the system will consider the current turn "
              "complete and proceed to the next turn or task.",
        tools="Here is a list of functions in {format} format that you can invoke.\n{functions}\n"),
    "experimental": Wording(
        persona="You are an expert in generating structured function calls.",
        task="You are given a user query and a set of available functions. Your task is to produce one or more "
             "function/tool calls to fulfill the user's request. If no suitable function exists, or required "
             "parameters are missing, clearly indicate this.",
        untagged="Respond with only the function calls.\n\nYou MUST format it exactly as {shape}. {types} Do NOT "
                 "include any other text.",
        tagged="Return only the function calls enclosed in <TOOLCALL> tags.\n\nYou MUST format it exactly as "
               "<TOOLCALL>{shape}</TOOLCALL>. {types} Do NOT include any other text.",
        turns="At every turn, aim to complete the user's tasks within that turn. Continue emitting function calls "
              "until the request is satisfied to the best of your ability. Once no more calls are needed, the system "
              "will proceed to the next turn.",
        tools="Below is a list of callable functions in the {format} style:\n{functions}\n"),
}


def _assemble(prompt_format: str, persona: str, task: str, answer: str, turns: str, tools: str) -> str:
    if prompt_format == "markdown":
        return (f"{persona}\n\n## Task\n{task}\n\n## Tool Call Format\n{answer}\n\n## Multi-turn Behavior\n{turns}"
                f"\n\n## Available Tools\n{tools}")
    return f"{persona}{task}\n\n{answer}\n\n{turns}\n\n{tools}"  # BFCL joins persona and task without a space


# --- the function docs --------------------------------------------------------------------------


def function_docs(functions: list[dict[str, Any]], doc_format: str) -> str:
    if doc_format == "json":
        return json.dumps(functions, indent=4)
    if doc_format == "python":
        return "\n\n".join(part for function in functions for part in (_python_doc(function), "\n"))
    if doc_format == "xml":
        return "\n".join(_xml_doc(function) for function in functions)
    raise ValueError(f"unknown function doc format {doc_format!r}; BFCL's are {', '.join(DOC_FORMATS)}")


def _with_enum(meta: dict[str, Any]) -> str:
    description = meta.get("description", "")
    return description + f" Enum values: {meta['enum']}." if "enum" in meta else description


def _python_type(meta: dict[str, Any]) -> str:
    kind = meta.get("type", "string")
    primitive = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
    if kind in primitive:
        return primitive[kind]
    if kind in {"array", "list", "tuple"} and "items" in meta:
        return f"list[{_python_type(meta['items'])}]"
    if kind in {"object", "dict"}:
        return f"dict[str, {_python_type(meta['additionalProperties'])}]" if "additionalProperties" in meta else "dict"
    return kind


def _python_param(name: str, meta: dict[str, Any], depth: int) -> str:
    default = f", default={meta['default']!r}" if "default" in meta else ""
    line = f"{' ' * (8 + 4 * depth)}{name} ({_python_type(meta)}{default}): {_with_enum(meta)}\n"
    children = meta.get("properties", {})
    return line + "".join(_python_param(child, child_meta, depth + 1) for child, child_meta in children.items())


def _python_doc(function: dict[str, Any]) -> str:
    properties = function.get("parameters", {}).get("properties", {})
    args = ("    Args:\n" + "".join(_python_param(name, meta, 0) for name, meta in properties.items())
            if properties else "")
    return f"# Function: {function['name']}\n    \"\"\"\n    {function.get('description', '')}\n\n{args}    \"\"\"\n"


def _xml_param(name: str, meta: dict[str, Any], required: list[str] | None, level: int) -> str:
    indent = " " * level * 2
    kind = meta.get("type", "string")
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    is_required = "true" if required is None or name in required else "false"
    attributes = f'name="{name}", type="{kind}", required="{is_required}"'
    if "default" in meta:
        attributes += f' default="{meta["default"]!r}"'
    # BFCL drops every comma of the attributes, those inside a name or default value included.
    text = f"{indent}<param {attributes.replace(',', '')}>\n{indent}  <desc>{_with_enum(meta)}</desc>\n"
    if "properties" in meta:
        children = "".join(_xml_param(child, child_meta, meta.get("required"), level + 2)
                           for child, child_meta in meta["properties"].items())
        text += f"{indent}  <params>\n{children}{indent}  </params>\n"
    return text + f"{indent}</param>\n"


def _xml_doc(function: dict[str, Any]) -> str:
    schema = function["parameters"]
    params = "".join(_xml_param(name, meta, schema.get("required"), 2)
                     for name, meta in schema.get("properties", {}).items())
    return (f'<function name="{function["name"]}">\n  <desc>{function.get("description", "")}</desc>\n'
            f"  <params>\n{params}  </params>\n</function>\n")


# --- the variation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptVariation:
    return_format: str = "python"
    tool_call_tag: bool = False
    doc_format: str = "json"
    prompt_format: str = "plaintext"
    style: str = "classic"

    @classmethod
    def parse(cls, config: str) -> PromptVariation:
        """A variation from BFCL's name for it; a ValueError names the text and the form."""
        match = _CONFIG.fullmatch(config) if isinstance(config, str) else None
        if match is None:
            raise ValueError(f"prompt variation {config!r} is not one of BFCL's: write ret_fmt="
                             f"{'|'.join(RETURN_FORMATS)}&tool_call_tag=True|False&func_doc_fmt={'|'.join(DOC_FORMATS)}"
                             f"&prompt_fmt={'|'.join(PROMPT_FORMATS)}&style={'|'.join(STYLES)}")
        ret, tag, doc, prompt, style = match.groups()
        return cls(ret, tag == "True", doc, prompt, style)

    @property
    def config(self) -> str:
        return (f"ret_fmt={self.return_format}&tool_call_tag={self.tool_call_tag}&func_doc_fmt={self.doc_format}"
                f"&prompt_fmt={self.prompt_format}&style={self.style}")

    @property
    def handler(self) -> str:
        """The decoder BFCL's runner reads an answer to this prompt with."""
        return handler_name(self.return_format, self.tool_call_tag)

    def system_prompt(self, functions: list[dict[str, Any]]) -> str:
        """The prompt for these function docs (BFCL's language hints already added)."""
        wording = WORDINGS[self.style]
        how = wording.tagged if self.tool_call_tag else wording.untagged
        answer = how.format(shape=ANSWER_SHAPES[self.return_format], types=TYPE_NOTES[self.return_format])
        tools = wording.tools.format(format=self.doc_format, functions=function_docs(functions, self.doc_format))
        return _assemble(self.prompt_format, wording.persona, wording.task, answer, wording.turns, tools)


def all_variations() -> list[PromptVariation]:
    return [PromptVariation.parse(config) for config in format_sensitivity_configs()]


CHOICES = ("none", "random")


def reaches(task: Any) -> bool:
    """Whether BFCL's prompt variations reach a task: BFCL varies the prompt of single-turn
    Python entries only (its multi-turn, Java and JavaScript runs always use the default).
    Relevance and irrelevance answers are read in the variation's format too, so that a call
    written as asked counts as a call. The one rule of the env, the trainer's --prompt_variation,
    the format-sensitivity set's id file and bench.heldout --prompt_variations."""
    return task.language == "python" and task.kind in ("ast", "relevance", "irrelevance")


def variation_conflicts(choice: str | None, *, tool_format: bool = False, handler: bool = False,
                        system_prompt: bool = False, prefix: str = "") -> list[str]:
    """What is wrong with a prompt-variation choice (None, "none", "random" or one of BFCL's
    configurations), and what it leaves no place for: native tool calling, a fixed decoder or
    another system prompt. The env's arguments (``prefix=""``) and the commands' flags
    (``prefix="--"``) are checked by it."""
    if choice in (None, "", "none"):
        return []
    found = []
    if choice not in CHOICES:
        try:
            PromptVariation.parse(choice)
        except ValueError as exc:
            found.append(f"{prefix}prompt_variation: {exc}, or none or random")
    for given, name, why in ((tool_format, "tool_format", "BFCL varies the prompts of prompting models only"),
                             (handler, "handler", "each variation's answers are read by its own decoder"),
                             (system_prompt, "system_prompt", "the variation writes the system prompt")):
        if given:
            found.append(f"{prefix}prompt_variation has no place with {prefix}{name} ({why}): leave one out")
    return found
