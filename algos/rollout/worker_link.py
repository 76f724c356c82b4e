"""A rollout engine's worker process and the pipe to it: what the ``vllm`` engine talks through.

The worker writes its output to a log file of its own, kept when it fails, so that an error
can name it. A worker that dies, with or without a request in flight (the pipe then ends, or is
reset), is an ``EngineError`` naming the engine, its exit status, its log and what to do: never
a bare ``EOFError`` or ``ConnectionResetError``.
"""

from __future__ import annotations

import subprocess
import tempfile
from multiprocessing import Pipe
from pathlib import Path

from fcenv.algos.config import ConfigError

# What a user can do when an engine fails, said with every failure.
REMEDY = ("a run's checkpoints are kept (go on with --resume RUN); --rollout_engine hf samples in the "
          "training process; `make vllm` rebuilds .vllm-venv if vLLM itself is broken")


class EngineError(ConfigError):
    """The vLLM engine could not start (vLLM missing, a model it cannot serve), or a request
    failed in it; the message says why."""


class WorkerLink:
    """``python script <fd>`` started with one end of a pipe; messages are pickled tuples."""

    def __init__(self, name: str, python: str, script: Path, env: dict[str, str]):
        self.name, self.python = name, python
        handle, log = tempfile.mkstemp(prefix="fcenv-vllm-", suffix=".log")
        self.log = Path(log)
        self.connection, child = Pipe()
        try:
            with open(handle, "wb") as output:
                self.process = subprocess.Popen([python, str(script), str(child.fileno())], pass_fds=[child.fileno()],
                                                env=env, stdout=output, stderr=subprocess.STDOUT)
        except OSError as error:
            self.connection.close()
            raise EngineError(f"cannot start {name} with {python}: {error}") from None
        finally:
            child.close()

    def request(self, command: str, **payload):
        """The worker's answer to one command; ``EngineError`` when it fails or dies."""
        self.send((command, payload), command)
        status, result = self.receive(command)
        if status != "ok":
            raise EngineError(f"{self.name}, {command}: {result} (its log: {self.log})")
        return result

    def send(self, message, what: str) -> None:
        if self.process.poll() is not None:
            raise self.died(what)
        try:
            self.connection.send(message)
        except OSError:  # the worker died as it was sent (a broken or reset pipe)
            raise self.died(what) from None

    def receive(self, what: str):
        # The worker answers every message; only its death leaves one unanswered.
        while not self.connection.poll(1.0):
            if self.process.poll() is not None:
                break
        try:
            return self.connection.recv()
        except (EOFError, OSError):  # ended, or reset with the request unread
            raise self.died(what) from None

    def died(self, what: str) -> EngineError:
        self.process.wait()
        tail = self.log.read_text(errors="replace").strip().splitlines()[-5:] if self.log.exists() else []
        said = f"; its last words: {' | '.join(tail)}" if tail else ""
        return EngineError(f"{self.name} ({self.python}) exited with status {self.process.returncode} while "
                           f"{what}; its log: {self.log}{said}. {REMEDY[0].upper()}{REMEDY[1:]}")

    def close(self, timeout: float = 30) -> None:
        """Ask the worker to end, wait for it, and drop its log unless it failed."""
        if self.process.poll() is None:
            try:
                self.connection.send(("close", {}))
                self.connection.recv()
            except (EOFError, OSError):
                pass
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.connection.close()
        if self.process.returncode == 0:
            self.log.unlink(missing_ok=True)
