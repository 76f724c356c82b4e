"""Prompts as the independent clients render them: the tokenizer's own chat template.

``prompt_ids`` renders a chat and its tools (the env's messages, in ``bench/heldout.py``);
``query_ids`` renders one of BFCL's multi-turn queries whole, its chat history first put in the
message shape chat templates take (``bench/bfcl_flow.py``).
"""

from __future__ import annotations

import json
import sys


def prompt_ids(tokenizer, messages: list[dict], tools: list[dict] | None, *, max_new_tokens: int,
               context_window: int) -> list[int]:
    """The tokenizer's own chat template over the env's messages (and tools in FC mode), its
    latest tokens that leave room for the answer."""
    ids = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True,
                                        return_dict=False)
    return list(ids)[-(context_window - max_new_tokens):]


def template_messages(messages: list[dict]) -> list[dict]:
    """BFCL's chat history in the message shape chat templates take: its handler keeps each
    call as ``{"name", "arguments"}`` and an empty ``reasoning_content`` on every answer.

    Arguments a model wrote as a JSON string are given parsed, as BFCL's decoder runs them
    (``convert_to_function_call``): templates write arguments with ``tojson``, which would quote
    the string, where BFCL's own Qwen prompt writes it as it is."""
    shaped = []
    for message in messages:
        message = {k: v for k, v in message.items() if k != "reasoning_content" or v}
        if message.get("tool_calls"):
            message["tool_calls"] = [{"type": "function", "function": _parsed_arguments(call)}
                                     for call in message["tool_calls"]]
        shaped.append(message)
    return shaped


def _parsed_arguments(call):
    if not isinstance(call, dict) or not isinstance(call.get("arguments"), str):
        return call
    try:
        return {**call, "arguments": json.loads(call["arguments"])}
    except ValueError:
        return call


def query_ids(tokenizer, query: dict) -> list[int]:
    """The prompt of one of BFCL's queries: its chat and tools through the tokenizer's own chat
    template, whole (``prompt_ids`` with a window as large as a list can be)."""
    return prompt_ids(tokenizer, template_messages(query["messages"]), query["tools"], max_new_tokens=0,
                      context_window=sys.maxsize)
