"""From observations to context tokens and from action tokens to text.

Each observation is the whole chat so far, rendered by the env. Its tokens are the exact context
an action is sampled from and scored on. A chat longer than the context limit is cut from the
middle: the system prompt (the function docs) and the latest messages are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fcenv.algos.config import ConfigError
from fcenv.algos.model.batching import truncate_left


class ContextTooLong(ConfigError):
    """Even the system prompt and the latest message do not fit the context window."""


# The error type of an episode whose chat outgrew the context window before it ended.
CONTEXT_OVERFLOW = "context_overflow"


class ToolChat(list):
    """A chat of FC mode (native tool calling): its messages, and the tools its template shows."""

    def __init__(self, messages, tools):
        super().__init__(messages)
        self.tools = tools


def chat_of(info: dict) -> list[dict] | None:
    """The chat of a step's info, as ``TextCodec`` needs it to cut a long chat."""
    messages = info.get("messages")
    if messages is None or info.get("tools") is None:
        return messages
    return ToolChat(messages, info["tools"])


# Stands for the action's message while the template renders the chat after it; no chat holds it.
_MARKER = "\x00fcenv-action\x00"


class TextCodec:
    """Observation to context tokens (cut to the context limit), action tokens to text.

    A chat longer than the limit is cut from the middle, never from the start: the system
    prompt (the function docs) and the latest messages are kept, the oldest messages after
    the system prompt are dropped whole. With ``render`` (the env's renderer) and the chat's
    messages the cut re-renders the kept messages; without them the tokens are cut from the
    left, as for a plain text.
    """

    def __init__(self, tokenizer, context_limit: int, render: Callable[..., str] | None = None,
                 stop_ids: Sequence[int] = ()):
        self.tokenizer = tokenizer
        self.context_limit = context_limit
        self.render = render
        # The tokens that end an action; the template's text after one of them skips its end tag.
        self.stop_ids = set(stop_ids) or {tokenizer.eos_token_id}

    def render_chat(self, messages: Sequence[dict]) -> str:
        """The chat rendered as the env renders it (with its tools in FC mode, ``ToolChat``)."""
        tools = getattr(messages, "tools", None)
        return self.render(list(messages)) if tools is None else self.render(list(messages), tools)

    def tokens(self, text: str, allow_empty: bool = False) -> list[int]:
        # The renderer already wrote any special tokens (chat template), so none are added.
        ids = self.tokenizer(text, add_special_tokens=False).input_ids if text else []
        if ids or allow_empty:
            return ids
        return [self.tokenizer.eos_token_id]  # an empty observation still needs one position

    def encode(self, observation: str, messages: Sequence[dict] | None = None) -> list[int]:
        return self.encode_counted(observation, messages)[0]

    def encode_counted(self, observation: str, messages: Sequence[dict] | None = None,
                       entry: str = "") -> tuple[list[int], bool]:
        """(context tokens, whether the chat was cut). Raises ``ContextTooLong`` naming the
        entry and the token counts when not even the system prompt and the latest message fit."""
        ids = self.tokens(observation)
        if len(ids) <= self.context_limit:
            return ids, False
        if self.render is None or not messages:
            return truncate_left(ids, self.context_limit), True
        tools = getattr(messages, "tools", None)

        def render(kept: list[dict]) -> str:
            return self.render_chat(kept if tools is None else ToolChat(kept, tools))

        head = list(messages[:1]) if messages[0].get("role") == "system" else []
        rest = list(messages[len(head):])
        # The fewest dropped messages that fit: dropping more never makes a chat longer.
        low, high = 1, len(rest) - 1
        best = None
        while low <= high:
            middle = (low + high) // 2
            kept = self.tokens(render(head + rest[middle:]))
            if len(kept) <= self.context_limit:
                best, high = kept, middle - 1
            else:
                low = middle + 1
        if best is None:
            if head:
                head_tokens = len(self.tokens(render(head)))
                last_tokens = len(self.tokens(render(head + rest[-1:]))) - head_tokens
                fixed = "the system prompt" + (" (with the tools)" if tools is not None else "")
            else:  # FC mode without a system message: the template shows the tools with the messages
                head_tokens, last_tokens = 0, len(self.tokens(render(rest[-1:])))
                fixed = "the system prompt (none)"
            raise ContextTooLong(
                f"{f'entry {entry}: ' if entry else ''}the context does not fit the window of {self.context_limit} tokens "
                f"(--context_window minus --max_new_tokens) even when cut from the middle: {fixed} alone is "
                f"{head_tokens} tokens, the latest message {last_tokens}"
                f"{' with the tools' if tools is not None and not head else ''} and the whole chat {len(ids)}; "
                f"raise --context_window or use a shorter {'--system_prompt' if tools is None else 'set of tools'}")
        return best, True

    def follow(self, context: list[int], cut: bool, action: Sequence[int], observation: str, next_observation: str,
               messages: Sequence[dict] | None = None, entry: str = "") -> tuple[list[int], bool]:
        """The context of the step after ``action``, taken in ``context`` (the tokens of
        ``observation``, ``cut`` if the chat was cut to fit): (tokens, whether cut).

        Token ids stay ids: the next context is ``context``, the action's ids as sampled, then
        the tokens of the text the chat template puts after the action (the end of the message,
        tool results, the next user message, the prompt where the model answers). Decoding the
        action and encoding the chat again could give other ids, or in FC mode other text (the
        template writes the calls in its own form), so the model would be trained on a context it
        never produced; an episode is one growing token sequence instead. Where the template
        shows earlier messages otherwise once the chat has grown (Qwen3 drops the ``<think>``
        part of earlier turns), the context keeps what was sampled; ``fcenv generate``, like
        BFCL, shows the template's rendering. Where the chat no longer fits, or no text after
        the action can be found, the next chat is encoded whole, cut from the middle if need be
        (``ContextTooLong`` when even that does not fit)."""
        tail = None if cut else self.after_action(action, observation, next_observation, messages)
        if tail is not None:
            tokens = list(context) + list(action) + self.tokens(tail, allow_empty=True)
            if len(tokens) <= self.context_limit:
                return tokens, False
        return self.encode_counted(next_observation, messages, entry)

    def after_action(self, action: Sequence[int], observation: str, next_observation: str,
                     messages: Sequence[dict] | None) -> str | None:
        """The text the env's chat shows after ``action`` (sampled after ``observation``), as the
        chat template renders it; None where it cannot be told apart."""
        written = observation + self.tokenizer.decode(list(action), skip_special_tokens=False)
        if next_observation.startswith(written):  # the chat shows the action as written (prompting mode)
            return next_observation[len(written):]
        if self.render is None or not messages:
            return None
        # FC mode: the message holds the calls, which the template writes in its own form. The
        # action's message is rendered as a marker instead; what follows the marker is what
        # the template writes after the message, its end included.
        mine = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
        if mine is None:
            return None
        marked = [*messages[:mine], {"role": "assistant", "content": _MARKER}, *messages[mine + 1:]]
        tools = getattr(messages, "tools", None)
        try:
            text = self.render_chat(marked if tools is None else ToolChat(marked, tools))
        except Exception:  # a template that wants the calls for the tool results  # noqa: BLE001
            return None
        if text.count(_MARKER) != 1:
            return None
        tail = text[text.index(_MARKER) + len(_MARKER):]
        # The action's stop token is the message's end the template writes: it is in the action.
        stop = self.tokenizer.decode(list(action[-1:]), skip_special_tokens=False) if action else ""
        ended = bool(action) and action[-1] in self.stop_ids
        return tail[len(stop):] if ended and stop and tail.startswith(stop) else tail

    def decode(self, action: Sequence[int]) -> str:
        return self.tokenizer.decode(list(action), skip_special_tokens=True)
