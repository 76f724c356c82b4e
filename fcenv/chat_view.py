"""The chat of the env's current episode, as each step hands it out: the observation and
``info["messages"]`` / ``info["tools"]``, at a cost per step that does not grow with the chat.

A multi-turn chat only grows (the episode appends messages and never changes one), so:

- each message is copied once, the first time it is handed out, and the copies are shared by
  the infos of later steps; the env's own messages are never handed out (changing a copy
  changes what later infos show of it, never the episode);
- an episode that starts a new chat (a memory episode's next conversation) gives a new list as
  its ``messages``; the view then starts over;
- a renderer that can extend its previous rendering by the new messages renders only those:
  ``extend(rendered, messages, start, tools)``, on the built-in ``chatml`` and ``plain``
  renderers (``fcenv.prompts.MessageRenderer``) and the FC family templates
  (``fcenv.tool_formats.TemplateRenderer``, also when a tokenizer's chat template is one of
  them); any other renderer (a tokenizer's own template, a callable) renders the whole chat
  each step. The observation is still a new string each step: copying it costs about a
  millisecond per megabyte.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any


class ChatView:
    def __init__(self, episode, renderer: Callable[..., str], tool_mode: bool):
        self.episode = episode
        self.renderer = renderer
        self.tool_mode = tool_mode
        # Prompting-mode messages hold only strings, so copying each dict is a full copy.
        self._copy = copy.deepcopy if tool_mode else dict
        self._copies: list[dict[str, Any]] = []
        self._tools = copy.deepcopy(episode.tools) if tool_mode else None
        self._rendered: str | None = None
        self._rendered_count = 0
        self._source = episode.messages

    def _follow(self) -> None:
        if self.episode.messages is not self._source:  # a new chat: nothing copied or rendered is reused
            self._source = self.episode.messages
            self._copies, self._rendered, self._rendered_count = [], None, 0

    def messages(self) -> list[dict[str, Any]]:
        self._follow()
        messages = self.episode.messages
        self._copies.extend(self._copy(m) for m in messages[len(self._copies):])
        return list(self._copies)

    def tools(self) -> list[dict[str, Any]] | None:
        return self._tools

    def observation(self) -> str:
        self._follow()
        messages, tools = self.episode.messages, self.episode.tools
        extend = getattr(self.renderer, "extend", None)
        text = None
        if extend is not None and self._rendered is not None:
            text = extend(self._rendered, messages, self._rendered_count, tools)
        if text is None:
            text = self.renderer(messages, tools) if self.tool_mode else self.renderer(messages)
        self._rendered, self._rendered_count = text, len(messages)
        return text
