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


class OracleSession:
    """A driver process that stays up for one conversation: a request, then questions from
    the driver answered line by line, then the request's answer.

    ``play_fc(entries, ground_truths, answer)`` runs the ``fc_flow`` op (BFCL's inference flow
    on whole multi-turn entries, ``bfcl_driver.op_fc_flow``): each time the driver sends a batch
    of queries (``{"id", "messages", "tools"}``: BFCL's chat and tools for the model's next
    step) ``answer(queries)`` gives one ``{"text": ...}`` (or ``{"error": ...}``) per query.
    The driver's stderr goes to a file, so what BFCL prints cannot fill a pipe and stall it.
    """

    def __init__(self, python: str | Path):
        import tempfile

        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [str(python), str(DRIVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            env={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"},
        )

    def play_fc(self, entries: list[dict], ground_truths: list[list], answer, *, family: str = "hermes",
                concurrency: int = 64) -> list[dict[str, Any]]:
        self._send({"op": "fc_flow", "family": family, "entries": entries, "ground_truths": ground_truths,
                    "concurrency": concurrency})
        while True:
            message = self._receive()
            if "queries" not in message:
                return message["entries"]
            self._send({"answers": answer(message["queries"])})

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def _receive(self) -> dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"oracle driver exited ({self.process.wait()}):\n{self._log_tail()}")
        message = json.loads(line)
        if "driver_error" in message:
            raise RuntimeError(f"oracle driver error: {message['driver_error']}\n{self._log_tail()}")
        return message

    def _log_tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-4000:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()
        self.log.close()

    def __enter__(self) -> OracleSession:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
