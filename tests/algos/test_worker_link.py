"""An engine worker that dies with a request in flight is an EngineError naming the engine, its
exit status, its log (with its last words) and what to do, never a bare ConnectionResetError
or EOFError (algos/rollout/worker_link.py, which the vLLM engine talks through; the vLLM
engine itself: tests/algos/test_vllm_engine.py)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from fcenv.algos.rollout.worker_link import EngineError, WorkerLink

# A worker that says why it fails and dies without reading what it was sent.
DYING = "import sys, time; time.sleep(1); print('CUDA out of memory in the worker', flush=True); sys.exit(3)"


@pytest.fixture
def dying_worker(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(DYING)
    link = WorkerLink("the vLLM engine (--rollout_engine vllm)", sys.executable, script, dict(os.environ))
    yield link
    link.close()
    link.log.unlink(missing_ok=True)  # kept for a user; a test's is litter


def test_a_worker_that_dies_with_a_request_in_flight_is_named_with_its_log(dying_worker):
    dying_worker.send(("sample", {"contexts": [[1, 2, 3]] * 1000}), "sampling")  # in flight, never read
    with pytest.raises(EngineError) as died:
        dying_worker.receive("sampling")
    message = str(died.value)
    assert message.startswith("the vLLM engine (--rollout_engine vllm) (")
    assert "exited with status 3 while sampling" in message
    assert f"its log: {dying_worker.log}" in message and "CUDA out of memory in the worker" in message
    assert "--resume RUN" in message and "--rollout_engine hf" in message and "make vllm" in message
    assert dying_worker.log.read_text().strip() == "CUDA out of memory in the worker"
    dying_worker.close()
    assert dying_worker.log.exists()  # a failed worker's log is kept


def test_a_request_to_a_worker_already_gone_is_named_too(dying_worker):
    while dying_worker.process.poll() is None:
        time.sleep(0.1)
    with pytest.raises(EngineError, match="exited with status 3 while sync; its log: "):
        dying_worker.request("sync", adapter="x")
