"""Native tool calling (BFCL's "FC" mode): tools through the model's chat template, calls in
the model family's own format, results as ``tool`` messages.

A ``ToolFormat`` is one family's way of calling tools: the decoders BFCL uses for it (the
verdicts follow BFCL's FC handler for that family, ``fcenv.handlers.hermes`` / ``llama_json`` /
``mistral``) and a chat template in its style (``fcenv/chat_templates/``), used when the
tokenizer brings no template that renders tools. The env keeps the chat in the message shape
Hugging Face chat templates and OpenAI-compatible servers take:

- the first turn is the entry's messages as they are (BFCL adds no system prompt in FC mode);
  the tools are the entry's function docs with BFCL's language hints, as BFCL's FC handlers
  for open models pass them (names keep their dots);
- a step with calls becomes ``{"role": "assistant", "content": "", "tool_calls": [{"id",
  "type": "function", "function": {"name", "arguments"}}]}`` and each result a ``{"role":
  "tool", "tool_call_id", "name", "content"}`` message; ids are 9 letters and digits, as
  Mistral's templates require; templates without ids ignore them;
- a step without calls keeps its text as the assistant's content.

A new family is one ``ToolFormat`` and one ``register_tool_format`` call (or an entry point in
the ``fcenv.tool_formats`` group naming the ``ToolFormat``); every command that takes
``--tool_format`` then accepts it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fcenv.handlers import Call, DecodeError, decode_with, hermes, llama_json, mistral
from fcenv.handlers.registry import Registry

TEMPLATES = Path(__file__).resolve().parent / "chat_templates"
Decoder = Callable[[str], list[Call]]


@dataclass(frozen=True)
class ToolFormat:
    name: str
    decode: Decoder          # BFCL's decode_ast: single-turn verdicts
    decode_execute: Decoder  # BFCL's decode_execute: the calls a multi-turn step runs
    write: Callable[[list[Call]], str]  # the text a model of the family writes for calls
    template: str            # a file name in fcenv/chat_templates, or a path to the family's template

    def calls(self, text: str) -> list[Call]:
        return decode_with(self.decode, text)

    def step_calls(self, text: str) -> list[Call]:
        return decode_with(self.decode_execute, text)

    @property
    def chat_template(self) -> str:
        return (TEMPLATES / self.template).read_text()


TOOL_FORMATS: Registry[ToolFormat] = Registry("tool format", "fcenv", ("tool_formats",), "fcenv.tool_formats")


def register_tool_format(tool_format: ToolFormat) -> ToolFormat:
    return TOOL_FORMATS.register(tool_format.name, tool_format)


def write_hermes(calls: list[Call]) -> str:
    return "\n".join(f"<tool_call>\n{json.dumps({'name': c.name, 'arguments': c.arguments})}\n</tool_call>"
                     for c in calls)


def write_llama_json(calls: list[Call]) -> str:
    objects = [{"name": c.name, "parameters": c.arguments} for c in calls]
    if len(objects) > 1:
        return "; ".join(map(json.dumps, objects))  # each piece is read as JSON
    # One call is read as a Python expression, where JSON's true, false and null are undefined.
    text = json.dumps(objects[0]) if objects else "[]"
    try:
        llama_json.decode(text)
        return text
    except DecodeError:
        return repr(objects[0])


def write_mistral(calls: list[Call]) -> str:
    return "[TOOL_CALLS] " + json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls])


register_tool_format(ToolFormat("hermes", hermes.decode, hermes.decode_execute, write_hermes, "hermes.jinja"))
register_tool_format(ToolFormat("llama_json", llama_json.decode, llama_json.decode_execute, write_llama_json,
                                "llama_json.jinja"))
register_tool_format(ToolFormat("mistral", mistral.decode, mistral.decode_execute, write_mistral, "mistral.jinja"))


def get_tool_format(name: str | ToolFormat) -> ToolFormat:
    if isinstance(name, ToolFormat):
        return name
    if name not in TOOL_FORMATS:
        raise ValueError(f"unknown tool_format {name!r}; use one of {TOOL_FORMATS.names()}")
    return TOOL_FORMATS.get(name)


def available_tool_formats() -> list[str]:
    return TOOL_FORMATS.names()


def tool_format_conflicts(tool_format: bool, *, system_prompt: bool = False, handler: bool = False,
                          prefix: str = "") -> list[str]:
    """What a tool format leaves no place for, given with it: a system prompt (the tools go
    through the chat template; BFCL's FC mode adds none) and a decoder (answers are read in the
    family's format). The one statement of this rule, checked in one place,
    ``fcenv.chat_mode.mode_conflicts``: the env's arguments and a ``ChatMode``'s (``prefix=""``)
    and every command's flags (``prefix="--"``, ``fcenv.flags.TOOL_FORMAT``)."""
    if not tool_format:
        return []
    found = []
    if system_prompt:
        found.append(f"{prefix}tool_format renders the tools through the chat template (BFCL's FC mode adds no "
                     f"system prompt), so {prefix}system_prompt has no place: leave {prefix}system_prompt out")
    if handler:
        found.append(f"{prefix}tool_format decodes every answer in that family's format: leave {prefix}handler out")
    return found


# ---------------------------------------------------------------------------- messages


THINK_START, THINK_END = "<think>", "</think>"


def call_id(number: int) -> str:
    """The episode's ``number``-th call id: 9 letters and digits."""
    return f"call{number:05d}"[-9:]


def assistant_calls_message(calls: list[Call], first_id: int, text: str = "") -> dict[str, Any]:
    """The message of a step that made ``calls``, written as ``text``. Reasoning the text opens
    with (``<think>...</think>``, Qwen3's) is kept as ``reasoning_content``, as BFCL's Qwen
    handler keeps it: templates that take it show it until the next user turn."""
    message = {"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id(first_id + i), "type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}}
        for i, c in enumerate(calls)]}
    if THINK_END in text:
        thought = text.split(THINK_END)[0].rstrip("\n")
        message["reasoning_content"] = thought.split(THINK_START)[-1].lstrip("\n")
    return message


def tool_message(call: Call, result: str, number: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id(number), "name": call.name, "content": result}


# ---------------------------------------------------------------------------- rendering

ToolRenderer = Callable[[list[dict], list[dict]], str]


class TemplateRenderer:
    """Renders a chat template as Hugging Face's ``apply_chat_template`` does (sandboxed Jinja,
    blocks trimmed, ``tojson`` keeping non-ASCII text), ending where the model answers.

    The family templates in ``fcenv/chat_templates`` also render a continuation: with
    ``continuation`` set, only the messages given, without the chat's opening (system turn,
    tools, ``<s>``). Appended assistant and tool messages render the same alone as at the end
    of the chat (no message before them renders differently for them), so ``extend`` renders
    a chat grown by such messages from its previous rendering and the new messages only: an
    FC step costs the same however long the chat has grown.
    """

    def __init__(self, template: str):
        self.template = template
        self._compiled = _compile(template)
        self._continues = "continuation" in template
        if self._continues:
            probe = [{"role": "assistant", "content": "", "tool_calls": []}]
            whole, body = (self._render(probe, None, prompt, continuation=True) for prompt in (True, False))
            self._generation_prompt = whole[len(body):]

    def __call__(self, messages: list[dict], tools: list[dict]) -> str:
        return self._render(messages, tools, True)

    def extend(self, rendered: str, messages: list[dict], start: int, tools: list[dict]) -> str | None:
        """The rendering of ``messages`` from ``rendered``, that of ``messages[:start]``; None
        where only a whole rendering gives it (a new user or system message can move what
        comes before it: Mistral shows the tools before the last user turn)."""
        new = messages[start:]
        if not (self._continues and start and new and new[0].get("role") == "assistant"
                and all(m.get("role") in ("assistant", "tool") for m in new)
                and rendered.endswith(self._generation_prompt)):
            return None
        tail = self._render(new, tools, True, continuation=True)
        return rendered[:len(rendered) - len(self._generation_prompt)] + tail

    def _render(self, messages, tools, generation_prompt: bool, continuation: bool = False) -> str:
        return self._compiled.render(messages=messages, tools=tools or None, add_generation_prompt=generation_prompt,
                                     continuation=continuation, bos_token="", eos_token="")


def template_renderer(template: str) -> TemplateRenderer:
    return TemplateRenderer(template)


def family_templates() -> set[str]:
    return {TOOL_FORMATS.get(name).chat_template for name in TOOL_FORMATS.names()}


@lru_cache(maxsize=8)
def _compile(template: str):
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def tojson(value, indent=None, ensure_ascii=False, sort_keys=False):
        return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys)

    def raise_exception(message):
        raise ValueError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template)


def tokenizer_renderer(tokenizer, fallback_template: str | None = None) -> ToolRenderer:
    """A tokenizer's ``apply_chat_template`` with tools; ``fallback_template`` where the
    tokenizer's own template does not render tools (or it has none)."""
    own = getattr(tokenizer, "chat_template", None)
    template = own if isinstance(own, str) and "tools" in own else fallback_template
    if template in family_templates():  # renders as apply_chat_template does, and can extend a rendering
        return template_renderer(template)

    def render(messages: list[dict], tools: list[dict]) -> str:
        return tokenizer.apply_chat_template(messages, tools=tools or None, chat_template=template,
                                             tokenize=False, add_generation_prompt=True)

    return render
