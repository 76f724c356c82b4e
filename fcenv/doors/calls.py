"""One structured call (a name and its arguments, as a trainer's tool API hands them over)
written as the text the env decodes, so that exactly that call runs, or none.

verl hands a tool its arguments as a dict the model wrote in JSON; the env takes text. Writing
``name(key=value)`` from parts lets the parts write syntax: an argument *name* like
``"a=1), delete_file(path='x'"`` would make the text hold a second call, which would run. So
the names are checked (identifiers, and dotted identifiers for function names; a family's JSON
format quotes them) and the text is decoded again, as the env decodes it, before it is used.
Unless it reads back as this one call, unchanged, the call is refused with ``CallRefused``
saying why, and nothing runs: a family's format can alter a value (Mistral's drops a
``[TOOL_CALLS]`` inside one), and BFCL's prompting syntax runs an object of objects as a
nested call.
"""

from __future__ import annotations

from typing import Any

from fcenv.multi_turn.executor import call_text, executable_calls, is_function_name, is_identifier
from fcenv.handlers import Call, DecodeError, decode

__all__ = ["CallRefused", "written_call"]


class CallRefused(ValueError):
    """A call that cannot be handed to the env as text without becoming another call."""


def _same(a: Any, b: Any) -> bool:
    # repr tells 1 from 1.0 from True and keeps dict order, which == does not.
    return repr(a) == repr(b)


def written_call(name: str, arguments: dict[str, Any], *, tool_format: Any = None, handler: str | None = None) -> str:
    """The text that makes the env run exactly ``name(**arguments)``: BFCL's prompting syntax
    (``[name(k=v)]``, read with ``handler``, default ``python``), or a ``ToolFormat``'s own.
    Raises ``CallRefused`` naming the bad part when no such text exists."""
    if not isinstance(arguments, dict):
        raise CallRefused(f"the arguments of {name!r} must be an object, not {type(arguments).__name__}")
    intended = [Call(name, dict(arguments))]
    if tool_format is not None:
        # A family's format is JSON written by a serializer: any name is quoted, and the
        # read-back below catches what the family's own decoding changes.
        text = tool_format.write(intended)
        readers = {"single-turn": tool_format.calls, "multi-turn": tool_format.step_calls}
    else:
        # Python syntax is written from parts: only identifiers cannot write syntax.
        if not is_function_name(name):
            raise CallRefused(f"function name {name!r} is not an identifier; the call was not run")
        bad = [key for key in arguments if not is_identifier(key)]
        if bad:
            raise CallRefused(f"argument name {bad[0]!r} of {name!r} is not an identifier; the call was not run")
        try:
            text = f"[{call_text(name, intended[0].arguments)}]"
        except ValueError as exc:  # a value without a source form (an int past repr's limit)
            raise CallRefused(f"an argument of {name!r} cannot be written as a literal ({exc}); "
                              "the call was not run") from None
        # Read as the env runs it: BFCL's syntax makes an object of objects a nested call, which
        # is not the one call the model made with a plain object.
        readers = {"prompting": lambda t: executable_calls(decode(t, handler or "python"))}
    for reading, read in readers.items():
        try:
            back = read(text)
        except DecodeError as exc:
            back = exc
        if not isinstance(back, list) or not _same([(c.name, c.arguments) for c in back],
                                                   [(c.name, c.arguments) for c in intended]):
            raise CallRefused(f"the call to {name!r} cannot be written so that the env reads it back unchanged "
                              f"({reading} decoding gives {_shown(back)}); the call was not run")
    return text


def _shown(back: Any) -> str:
    text = repr(back) if isinstance(back, list) else f"no call: {back}"
    return text if len(text) <= 200 else text[:200] + "..."
