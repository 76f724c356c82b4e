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

The tool format is decided here, once: a ``ChatMode`` resolves a format's name to its
``ToolFormat`` (the one lookup by name in the package), and every other place takes the object
from it (or from the env, which makes a ``ChatMode`` of its keywords). What a tool format leaves
no place for (a system prompt, a decoder) is refused by one check, ``mode_conflicts``: a
``ChatMode`` made in code or by the env, and a command's flags before anything loads. "No
format" is None; ``from_flags`` reads a flag's "" (not given) as None.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, replace
from typing import Any

from fcenv.tool_formats import ToolFormat, get_tool_format, tool_format_conflicts


def mode_conflicts(tool_format: ToolFormat | str | None, system_prompt: str | None, handler: str | None = None, *,
                   prefix: str = "") -> list[str]:
    """What a tool format leaves no place for among the settings given with it (None: not
    given), each named with ``prefix``: "" for a ``ChatMode``'s (and the env's) keywords, "--"
    for a command's flags (``fcenv.flags.TOOL_FORMAT``, checked before anything loads)."""
    return tool_format_conflicts(tool_format is not None, system_prompt=system_prompt is not None,
                                 handler=handler is not None, prefix=prefix)


@dataclass(frozen=True)
class ChatMode:
    """Prompting (``tool_format`` None) or FC mode, with what renders the chats.

    ``tool_format``: FC mode's ``ToolFormat``; a registered name given is resolved to it here.
    ``system_prompt``: prompting's template (None: BFCL's prompting prompt); always None in FC
    mode. ``renderer``: what the env takes as ``renderer=`` (None: its default for the mode).
    ``prompt_variation``: one of BFCL v4's format-sensitivity prompts, or ``"random"`` (one drawn
    per episode), which writes the system prompt in place of the template (prompting only).
    ``handler``: a decoder given beside the mode (the env's ``handler=``), checked and not kept:
    a tool format reads every answer in its family's format."""

    tool_format: ToolFormat | None = None
    system_prompt: str | None = None
    renderer: Any = None
    prompt_variation: str | None = None
    handler: InitVar[str | None] = None

    def __post_init__(self, handler: str | None) -> None:
        if isinstance(self.tool_format, str):
            object.__setattr__(self, "tool_format", get_tool_format(self.tool_format))
        if conflicts := mode_conflicts(self.tool_format, self.system_prompt, handler):
            raise ValueError("; ".join(conflicts))
        if self.prompt_variation is not None and (self.tool_format is not None or self.system_prompt is not None):
            raise ValueError(f"prompt_variation={self.prompt_variation!r} writes the system prompt of a prompting "
                             f"chat: it takes no tool_format and no system_prompt")

    @classmethod
    def from_flags(cls, tool_format: str | None, system_prompt: str | None, *, fc_renderer: Any = None,
                   prompting_renderer: Any = None) -> ChatMode:
        """The mode ``--tool_format`` and ``--system_prompt`` choose (a tool format wins: FC mode
        shows no system prompt), with the renderer of that mode. A flag not given is "" on the
        command line: None from here on."""
        if tool_format:
            return cls(tool_format=tool_format, renderer=fc_renderer)
        return cls(system_prompt=system_prompt or None, renderer=prompting_renderer)

    @property
    def is_fc(self) -> bool:
        return self.tool_format is not None

    @property
    def tool_format_name(self) -> str | None:
        """The tool format's name, as records and run folders write it (None: prompting)."""
        return self.tool_format.name if self.is_fc else None

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
