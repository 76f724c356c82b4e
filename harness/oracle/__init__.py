"""The reference BFCL checker as a test oracle, run in its own venv.

``Oracle(python).run(requests)`` sends a batch of requests to ``bfcl_driver.py`` in a fresh
process of the oracle venv's interpreter and returns its answers in order. A fresh process
per batch keeps the reference's global instance cache and its unsandboxed ``eval`` away
from the test process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

DRIVER = Path(__file__).with_name("bfcl_driver.py")


def to_jsonable(value: Any) -> Any:
    """Our decoded values in the driver's JSON shape (tuples tagged)."""
    if isinstance(value, tuple):
        return {"__tuple__": [to_jsonable(v) for v in value]}
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return {"__float__": repr(value)}
    return value


def from_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(from_jsonable(v) for v in value["__tuple__"])
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        return {k: from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    return value


class Oracle:
    def __init__(self, python: str | Path):
        self.python = str(python)

    def run(self, requests: list[dict[str, Any]], timeout: float = 1800) -> list[dict[str, Any]]:
        payload = "".join(json.dumps(r) + "\n" for r in requests)
        proc = subprocess.run(
            [self.python, str(DRIVER)],
            input=payload,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"},
        )
        if proc.returncode != 0:
            raise RuntimeError(f"oracle driver failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        answers = [json.loads(line) for line in proc.stdout.splitlines()]
        if len(answers) != len(requests):
            raise RuntimeError(f"oracle answered {len(answers)} of {len(requests)} requests:\n{proc.stderr[-4000:]}")
        for answer in answers:
            if "driver_error" in answer:
                raise RuntimeError(f"oracle driver error: {answer['driver_error']}")
        return answers
