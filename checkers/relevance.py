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

from typing import Any

from checkers import register_checker
from checkers.result import CheckResult
from handlers.base import Call, DecodeError


IRRELEVANCE_FACETS = {"decodable": 1.0, "abstained": 3.0}
RELEVANCE_FACETS = {"decodable": 1.0, "called": 3.0}


# The three outcomes (a decode failure, no call, a call), each written out: these checks are
# so cheap that building the result is most of their cost.
@register_checker("irrelevance", facets=IRRELEVANCE_FACETS)
def check_irrelevance(task: Any, decoded: list[Call] | DecodeError) -> CheckResult:
    if isinstance(decoded, DecodeError):
        return CheckResult(True, None, [], {"decodable": 0.0, "abstained": 1.0})
    if len(decoded) > 0:  # BFCL's test: a decode that gave at least one call
        return CheckResult(False, "irrelevance_error:decoder_success",
                           ["Valid syntax. Successfully decode AST when it should not."],
                           {"decodable": 1.0, "abstained": 0.0})
    return CheckResult(True, None, [], {"decodable": 1.0, "abstained": 1.0})


@register_checker("relevance", facets=RELEVANCE_FACETS)
def check_relevance(task: Any, decoded: list[Call] | DecodeError) -> CheckResult:
    if isinstance(decoded, DecodeError) or len(decoded) == 0:
        return CheckResult(False, "relevance_error:decoder_failed",
                           ["Invalid syntax. Failed to decode AST when it should."],
                           {"decodable": float(not isinstance(decoded, DecodeError)), "called": 0.0})
    return CheckResult(True, None, [], {"decodable": 1.0, "called": 1.0})
