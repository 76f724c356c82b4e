"""BFCL's clean-up of raw model text, shared by its Python, Java and JavaScript decoders."""

from __future__ import annotations

from fcenv.handlers.base import DecodeError


def bracketed(text: str) -> str:
    """Trim backticks, newlines and spaces at both ends, then make the text one ``[...]``.

    This is the first step of ``default_decode_ast_prompting`` for every language: the
    Python decoder parses the result, the Java and JavaScript ones drop the first and last
    character again (so ``[f(a=1)]`` and ``f(a=1)`` both reach their parser as ``f(a=1)``).
    """
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    text = text.strip("`\n ")
    # Every text passes here: indexing is cheaper than startswith/endswith's method calls.
    if text[:1] != "[":
        text = "[" + text
    if text[-1] != "]":
        text += "]"
    return text
