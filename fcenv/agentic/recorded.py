"""BFCL's evaluation of a recorded agentic result (``fcenv evaluate`` on a result file).

BFCL records an agentic question as one turn of step texts (a string when inference failed).
Its runner takes the last step that decodes to no call as the final answer and hands it to the
agentic checker; a result that is not one turn is an inference error.
"""

from __future__ import annotations

from typing import Any

from fcenv.checkers.agentic import INFERENCE_ERROR
from fcenv.checkers.result import CheckResult
from fcenv.episode import EpisodeSettings
from fcenv.multi_turn.executor import decode_step
from fcenv.tasks import Task
from fcenv.handlers.native import InferenceCrash


def final_message(steps: list[str], settings: EpisodeSettings, task: Task) -> str | None:
    """The last step that holds no call, or None when every step held calls."""
    last = None
    for step in steps:
        try:
            calls = decode_step(step, settings.handler_for(task), settings.tool_format)
        except InferenceCrash:
            calls = []
        if not calls:
            last = step
    return last


def check_recorded_agentic(task: Task, result: Any, settings: EpisodeSettings) -> CheckResult:
    if not isinstance(result, list) or len(result) != 1:
        return CheckResult(False, INFERENCE_ERROR,
                           ["Error during inference phase. Model did not output a list of model responses."], {})
    return settings.checker_for(task)(task, final_message(result[0], settings, task))
