"""The chat a model sees: BFCL's prompting system prompt, its language hints, and renderers.

By default the prompt is BFCL's own prompt for "prompting" (non-native tool calling) models,
character for character, so that a model trained here is scored by BFCL on the prompt it
learned from. A renderer turns the chat messages into the observation string.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

Messages = list[dict[str, Any]]
Renderer = Callable[[Messages], str]

FUNCTIONS_PLACEHOLDER = "{functions}"

# BFCL's default prompt (ret_fmt=python, no tool-call tag, json docs, plaintext, classic).
# The missing space after "functions." and the double space before "You SHOULD NOT" are BFCL's.
BFCL_SYSTEM_PROMPT = (
    "You are an expert in composing functions.You are given a question and a set of possible "
    "functions. Based on the question, you will need to make one or more function/tool calls to "
    "achieve the purpose. If none of the functions can be used, point it out. If the given question "
    "lacks the parameters required by the function, also point it out.\n\n"
    "You should only return the function calls in your response.\n\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of "
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)].  "
    "You SHOULD NOT include any other text in the response.\n\n"
    "At each turn, you should try your best to complete the tasks requested by the user within the "
    "current turn. Continue to output functions to call until you have fulfilled the user's request "
    "to the best of your ability. Once you have no more functions to call, the system will consider "
    "the current turn complete and proceed to the next turn or task.\n\n"
    "Here is a list of functions in json format that you can invoke.\n{functions}\n"
)

# What BFCL tells a prompting model when held-out functions come back (multi_turn_miss_func).
ADDED_FUNCTIONS_MESSAGE = "{functions}\nI have updated some more functions you can choose from. What about now?"

_SYNTAX = {"python": "Python 3", "java": "Java 8 SDK", "javascript": "JavaScript"}
_LANGUAGE_NAME = {"java": "Java", "javascript": "JavaScript"}


def hinted_functions(functions: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    """BFCL's inference-time docs: a syntax note on each function, and for Java and JavaScript
    every parameter shown as a string whose description names the original type."""
    out = copy.deepcopy(functions)
    for doc in out:
        doc["description"] = doc.get("description", "") + f" Note that the provided function is in {_SYNTAX[language]} syntax."
        if language not in _LANGUAGE_NAME:
            continue
        for param in doc.get("parameters", {}).get("properties", {}).values():
            kind = param.get("type")
            if kind == "any":
                note = f" This parameter can be of any type of {_LANGUAGE_NAME[language]} object in string representation."
            else:
                note = f" This is {_LANGUAGE_NAME[language]} {kind} type parameter in string representation."
            if kind in ("ArrayList", "Array", "array") and "items" in param:
                note += f" The list elements are of type {param['items'].get('type')}; they are not in string representation."
            if kind == "dict" and "properties" in param:
                note += (" The dictionary entries have the following schema; they are not in string representation. "
                         + json.dumps(param["properties"]))
            param["description"] = param.get("description", "") + note
            param["type"] = "string"
            param.pop("items", None)
            param.pop("properties", None)
    return out


def system_prompt(functions: list[dict[str, Any]], template: str = BFCL_SYSTEM_PROMPT) -> str:
    return template.replace(FUNCTIONS_PLACEHOLDER, json.dumps(functions, indent=4))


def with_system_prompt(messages: Messages, prompt: str) -> Messages:
    """BFCL puts the prompt before an existing leading system message, else adds one."""
    messages = copy.deepcopy(messages)
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = prompt + "\n\n" + messages[0]["content"]
        return messages
    return [{"role": "system", "content": prompt}, *messages]


def added_functions_message(functions: list[dict[str, Any]]) -> dict[str, str]:
    """The user message of a miss_func turn: BFCL shows the docs as a Python repr."""
    return {"role": "user", "content": ADDED_FUNCTIONS_MESSAGE.replace(FUNCTIONS_PLACEHOLDER, repr(functions))}


class MessageRenderer:
    """A chat rendered message by message, then a prompt where the model answers. Each message
    renders alone, so ``extend`` renders a grown chat from its last rendering and the new
    messages only (``fcenv.chat_view``)."""

    def __init__(self, message: Callable[[dict[str, Any]], str], answer_prompt: str):
        self.message = message
        self.answer_prompt = answer_prompt

    def __call__(self, messages: Messages) -> str:
        return "".join(map(self.message, messages)) + self.answer_prompt

    def extend(self, rendered: str, messages: Messages, start: int, tools: Any = None) -> str | None:
        if not rendered.endswith(self.answer_prompt):
            return None
        new = "".join(map(self.message, messages[start:]))
        return rendered[:len(rendered) - len(self.answer_prompt)] + new + self.answer_prompt


# ChatML, ending with the assistant header: the observation an agent continues.
render_chatml = MessageRenderer(lambda m: f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n", "<|im_start|>assistant\n")
render_plain = MessageRenderer(lambda m: f"{m['role'].capitalize()}: {m['content']}\n\n", "Assistant:")


RENDERERS: dict[str, Renderer] = {"chatml": render_chatml, "plain": render_plain}


def get_renderer(renderer: Any, tool_format: Any = None) -> Callable[..., str]:
    """The env's renderer: ``(messages) -> str``, or with a ``tool_format`` (FC mode)
    ``(messages, tools) -> str``. A tokenizer renders with its chat template."""
    if tool_format is not None:
        from fcenv.tool_formats import template_renderer, tokenizer_renderer

        if renderer is None:
            return template_renderer(tool_format.chat_template)
        if hasattr(renderer, "apply_chat_template"):
            return tokenizer_renderer(renderer, tool_format.chat_template)
        if callable(renderer):
            return renderer
        raise ValueError(f"with tool_format the renderer is a tokenizer, a callable (messages, tools) -> str or "
                         f"None, not {renderer!r}")
    if renderer is None:
        return render_chatml
    if hasattr(renderer, "apply_chat_template"):
        return lambda messages: renderer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if callable(renderer):
        return renderer
    try:
        return RENDERERS[renderer]
    except KeyError:
        raise ValueError(f"unknown renderer {renderer!r}; use one of {sorted(RENDERERS)} or a callable") from None
