"""BFCL's relevance and irrelevance checks (checker names ``"relevance"`` and ``"irrelevance"``).

BFCL decodes the output as Python calls whatever the category, and asks only whether it
holds a call: a decode failure, prose, ``[]`` or a non-call shape all count as "no call"
(BFCL's ``is_empty_output``). Arguments and even function names are not checked.

- ``irrelevance`` (irrelevance, live_irrelevance): valid iff there is no call; otherwise
  ``irrelevance_error:decoder_success``.
- ``relevance`` (live_relevance): valid iff there is a call; otherwise
  ``relevance_error:decoder_failed``.

Facets: ``decodable`` (1.0 when the text decoded into calls, even an empty list) and
``abstained`` for irrelevance (1.0 when no call was made) or ``called`` for relevance (1.0
when a call was made), so that 1.0 is always the right direction. Their default weights in
the shaped reward are declared below; ``abstained`` and ``called`` decide the verdict, so they
weigh most.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from fcenv.checkers import register_checker
from fcenv.checkers.result import CheckResult
from fcenv.handlers.base import Call, DecodeError


IRRELEVANCE_FACETS = {"decodable": 1.0, "abstained": 3.0}
RELEVANCE_FACETS = {"decodable": 1.0, "called": 3.0}


# Each outcome's facets, one read-only mapping per outcome: these checks are so cheap that
# building the result is most of their cost.
_NO_DECODE_ABSTAINED = MappingProxyType({"decodable": 0.0, "abstained": 1.0})
_CALLED = MappingProxyType({"decodable": 1.0, "abstained": 0.0})
_ABSTAINED = MappingProxyType({"decodable": 1.0, "abstained": 1.0})
_NO_DECODE_NO_CALL = MappingProxyType({"decodable": 0.0, "called": 0.0})
_NO_CALL = MappingProxyType({"decodable": 1.0, "called": 0.0})
_CALL_MADE = MappingProxyType({"decodable": 1.0, "called": 1.0})


@register_checker("irrelevance", facets=IRRELEVANCE_FACETS)
def check_irrelevance(task: Any, decoded: list[Call] | DecodeError) -> CheckResult:
    if isinstance(decoded, DecodeError):
        return CheckResult(True, None, [], _NO_DECODE_ABSTAINED)
    if len(decoded) > 0:  # BFCL's test: a decode that gave at least one call
        return CheckResult(False, "irrelevance_error:decoder_success",
                           ["Valid syntax. Successfully decode AST when it should not."], _CALLED)
    return CheckResult(True, None, [], _ABSTAINED)


@register_checker("relevance", facets=RELEVANCE_FACETS)
def check_relevance(task: Any, decoded: list[Call] | DecodeError) -> CheckResult:
    if isinstance(decoded, DecodeError) or len(decoded) == 0:
        return CheckResult(False, "relevance_error:decoder_failed",
                           ["Invalid syntax. Failed to decode AST when it should."],
                           _NO_DECODE_NO_CALL if isinstance(decoded, DecodeError) else _NO_CALL)
    return CheckResult(True, None, [], _CALL_MADE)
