"""How a model is shown its chats, decided once: ``ChatMode``.

A chat is rendered in one of two modes. Prompting (BFCL's default): a system prompt template
with ``{functions}`` holds the function docs, and a renderer ``(messages) -> str`` (a
tokenizer's chat template, ChatML, ...) turns the chat into text. FC mode (native tool
calling, ``tool_format``): no system prompt, the tools go to a renderer
``(messages, tools) -> str``, usually the model's tokenizer, or the family's template when
there is none.

A command makes its ``ChatMode`` once, from its flags and the model it loaded, and hands it to
everything that renders a chat (the env, the warm-ups, the prompt checks, the doors), so they
cannot disagree. ``env_options`` is what ``FunctionCallingEnv`` (and ``gym.make``) take for it:
the env keeps its own keywords, ``tool_format=``, ``system_prompt=`` and ``renderer=``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class ChatMode:
    """Prompting (``tool_format`` None) or FC mode, with what renders the chats.

    ``system_prompt``: prompting's template (None: BFCL's prompting prompt); always None in FC
    mode. ``renderer``: what the env takes as ``renderer=`` (None: its default for the mode).
    ``prompt_variation``: one of BFCL v4's format-sensitivity prompts, or ``"random"`` (one drawn
    per episode), which writes the system prompt in place of the template (prompting only)."""

    tool_format: str | None = None
    system_prompt: str | None = None
    renderer: Any = None
    prompt_variation: str | None = None

    def __post_init__(self) -> None:
        # "" is how a flag says "not given": one spelling of each absence.
        object.__setattr__(self, "tool_format", self.tool_format or None)
        if self.tool_format is not None and self.system_prompt is not None:
            raise ValueError(f"tool_format={self.tool_format!r} renders the tools through the chat template and "
                             f"takes no system prompt; give one of tool_format and system_prompt")
        if self.prompt_variation is not None and (self.tool_format is not None or self.system_prompt is not None):
            raise ValueError(f"prompt_variation={self.prompt_variation!r} writes the system prompt of a prompting "
                             f"chat: it takes no tool_format and no system_prompt")

    @classmethod
    def from_flags(cls, tool_format: str | None, system_prompt: str | None, *, fc_renderer: Any = None,
                   prompting_renderer: Any = None) -> ChatMode:
        """The mode ``--tool_format`` and ``--system_prompt`` choose (a tool format wins: FC mode
        shows no system prompt), with the renderer of that mode."""
        if tool_format:
            return cls(tool_format=tool_format, renderer=fc_renderer)
        return cls(system_prompt=system_prompt or None, renderer=prompting_renderer)

    @property
    def is_fc(self) -> bool:
        return self.tool_format is not None

    @property
    def hides_function_docs(self) -> bool:
        """A prompting template without ``{functions}``: the model is not shown the docs."""
        return self.system_prompt is not None and "{functions}" not in self.system_prompt

    def env_options(self) -> dict[str, Any]:
        """``FunctionCallingEnv``'s keywords for this mode."""
        if self.is_fc:
            return {"tool_format": self.tool_format, "renderer": self.renderer}
        if self.prompt_variation is not None:
            return {"prompt_variation": self.prompt_variation, "renderer": self.renderer}
        return {"system_prompt": self.system_prompt, "renderer": self.renderer}

    def varied(self, variation: str | None) -> ChatMode:
        """The mode under ``--prompt_variation`` (a configuration or ``random``): the variation
        writes the system prompt, so the template goes. None, ``""`` or ``"none"``, or FC mode
        (where the flags refuse a variation): the mode itself."""
        if self.is_fc or variation in (None, "", "none"):
            return self
        return replace(self, system_prompt=None, prompt_variation=variation)

    def rendered_by(self, renderer: Any) -> ChatMode:
        """The same mode with another renderer (a door that renders the messages itself)."""
        return replace(self, renderer=renderer)

    def family(self):
        """FC mode's ``ToolFormat`` (how calls are written and read); None when prompting."""
        from fcenv.tool_formats import get_tool_format

        return get_tool_format(self.tool_format) if self.is_fc else None
