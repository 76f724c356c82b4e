"""What BFCL's native tool-calling (FC) handlers do with a call once they have found it.

The three families (``fcenv.handlers.hermes``, ``fcenv.handlers.llama_json``, ``fcenv.handlers.mistral``)
differ in how calls are written; after that, BFCL treats them alike:

- for single-turn verdicts (``decode_ast``) each call becomes ``{name: arguments}``, and the
  runner wants ``arguments`` to be a JSON object (``decoder_wrong_output_format`` otherwise,
  or ``decoder_failed`` where the handler itself trips over it);
- for multi-turn steps (``decode_execute``) the arguments are written back as
  ``name(k=repr(v), ...)`` and run, so they stay plain data (a dict of dicts is a dict, not
  a nested call as in the prompting format), and some handlers first ``json.loads`` arguments
  given as a JSON string.

Some answers make BFCL's *inference* fail, not its decoder, for the families whose handler
keeps the calls in the chat history and renders them back into the next prompt: the entry
is then recorded as an inference error and fails whole. Decoders raise ``InferenceCrash``
(a ``DecodeError``, so single-turn verdicts are unchanged) to let a multi-turn episode end the
same way.

Names must be strings here. BFCL would keep a number as a name (and then find no such
function, or count it as "a call" for relevance): such output is refused as
``decoder_wrong_output_format`` instead, a documented divergence.
"""

from __future__ import annotations

from typing import Any

from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.json_calls import parse_json, wrong_shape


class InferenceCrash(DecodeError):
    """BFCL's inference loop fails on this answer: the multi-turn entry is an inference error.

    ``immediate``: it fails before the turn can go on; otherwise the step ends the turn (no
    call decodes) and the failure comes at the next query, which only a later turn makes.
    """

    def __init__(self, message: str, immediate: bool):
        super().__init__(message)
        self.immediate = immediate

    def fails_entry(self, turn: int, turns: int) -> bool:
        """Whether BFCL records an inference error when this answer comes in ``turn`` (counted
        from 0) of an entry of ``turns``: a crash at the next query needs a later turn to query."""
        return self.immediate or turn < turns - 1


def native_call(name: Any, arguments: Any, *, bad_arguments: str = "decoder_wrong_output_format",
                json_string_arguments: bool = False) -> Call:
    """One call as BFCL's FC handlers pass it on.

    ``bad_arguments`` is the failure kind for arguments that are not an object;
    ``json_string_arguments`` parses arguments given as a JSON string first (what BFCL's
    ``convert_to_function_call`` does on multi-turn steps).
    """
    if isinstance(name, (dict, list)):
        raise DecodeError("a call's name must be a string, not a JSON container")  # unhashable in BFCL
    if not isinstance(name, str):
        raise wrong_shape(f"a call's name must be a string, not {type(name).__name__}")
    if json_string_arguments and isinstance(arguments, str):
        arguments = parse_json(arguments)
    if not isinstance(arguments, dict):
        raise DecodeError(f"the arguments of {name!r} must be a JSON object", kind=bad_arguments)
    return Call(name, arguments)


def require_keys(item: Any, *keys: str) -> None:
    """BFCL indexes the call object directly: anything else raises there."""
    if not isinstance(item, dict):
        raise DecodeError(f"a call must be a JSON object, got {type(item).__name__}")
    for key in keys:
        if key not in item:
            raise DecodeError(f"a call needs the key {key!r}")
