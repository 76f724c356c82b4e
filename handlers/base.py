"""The types every handler produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """One function call decoded from model text.

    ``arguments`` keeps the values exactly as the decoder produced them (BFCL semantics:
    tuples stay tuples, Java and JavaScript values stay source strings), in the order the
    model wrote them, because the checkers' verdicts depend on both.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_bfcl(self) -> dict[str, dict[str, Any]]:
        """BFCL's shape for a decoded call: ``{name: {param: value}}``."""
        return {self.name: dict(self.arguments)}


# A multi-turn step runs every call it holds, and each call and its result become messages of
# the chat, so a step holds at most this many: BFCL's largest ground-truth turn makes 34. A
# step with more holds none (its turn ends), as a text too large to parse does; decoders of
# steps stop reading at the first call past it.
MAX_STEP_CALLS = 128


class DecodeError(ValueError):
    """Model text that does not decode into calls.

    ``kind`` is BFCL's name for the failure: ``decoder_failed`` (the text does not parse)
    or ``decoder_wrong_output_format`` (it parses, but not into a list of calls).
    """

    kind = "decoder_failed"

    def __init__(self, message: str, kind: str = "decoder_failed"):
        # Model text fails to decode all the time, so this is kept cheap: the message is
        # already the only argument unless a kind is given.
        if kind != "decoder_failed":
            self.args = (message,)
            self.kind = kind


def too_many_calls() -> DecodeError:
    return DecodeError(f"more than {MAX_STEP_CALLS} calls in one step")
