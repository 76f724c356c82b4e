"""`fcenv generate --endpoint` against a real HTTP server (started here on
127.0.0.1) that answers some requests with malformed replies: a bad reply is that entry's
failed answer and the run goes on; a failing server ends the run cleanly, and the answers
finished before it are kept."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from fcenv.bundled import BUNDLED
from fcenv.data import load_tasks

ROOT = Path(__file__).resolve().parents[2]


def fcenv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def subset(folder: Path, split: str, count: int) -> Path:
    """The first ``count`` entries of a bundled split, with their answers."""
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    source = BUNDLED[split]
    for src, dst in ((source, folder / source.name),
                     (source.parent / "possible_answer" / source.name, folder / "possible_answer" / source.name)):
        dst.write_text("".join(src.read_text().splitlines(keepends=True)[:count]))
    return folder / source.name


class Server(BaseHTTPRequestHandler):
    """Replies chosen by ``plan(body, number)``: (status, JSON value or raw bytes)."""

    plan = staticmethod(lambda body, number: (200, {}))
    requests = 0

    def do_POST(self):  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests += 1
        status, reply = type(self).plan(body, type(self).requests)
        data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(plan):
    Server.plan, Server.requests = staticmethod(plan), 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/v1"


def message(**fields):
    return {"choices": [{"index": 0, "message": {"role": "assistant", **fields}}]}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_bad_reply_fails_its_entry_and_the_run_goes_on(tmp_path):
    single = subset(tmp_path / "data", "tiny_eval", 7)
    multi = subset(tmp_path / "data", "multi_turn_eval", 2)
    questions = {t.question[0][0]["content"]: t for t in load_tasks(single) + load_tasks(multi)}
    single_tasks = load_tasks(single)

    def plan(body, number):
        task = questions[body["messages"][1]["content"]]  # after the system prompt
        steps = sum(m["role"] == "assistant" for m in body["messages"])
        if task.is_multi_turn:  # the first entry: a good call, then a message that is a string
            return (200, message(content="[add(a=7, b=7)]") if steps == 0 else
                    {"choices": [{"message": "Done."}]} if task.id.endswith("_0") else message(content="Done."))
        (name, params), = task.ground_truth[0].items()
        truth = f"[{name}({', '.join(f'{k}={v[0]!r}' for k, v in params.items() if v[0] != '')})]"
        index = single_tasks.index(task)
        return [
            (200, {**message(content=truth), "usage": {"prompt_tokens": 41, "completion_tokens": 9}}),
            (200, {"choices": [{"message": truth}]}),                                      # message is a string
            (200, message(content=[{"type": "text", "text": truth[:5]}, {"type": "text", "text": truth[5:]}])),
            (200, {"choices": []}),
            (200, b"<html>oops</html>"),
            (400, {"error": {"message": "the prompt is too long"}}),
            (200, message(content={"text": truth})),
        ][index]

    server, url = serve(plan)
    try:
        done = fcenv("generate", "--endpoint", url, "--model_name_or_path", "m", "--dataset_path", str(single), str(multi),
                     "--out", str(tmp_path / "out"), "--no-progress")
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fcenv generate: 5 of 7 answers to" in done.stderr and "Traceback" not in done.stderr
    answers = lines(tmp_path / "out" / "tiny_eval_result.json")
    assert [a["id"] for a in answers] == [t.id for t in single_tasks]
    failed = [a["result"] for a in answers if a["result"].startswith("Error during inference: ")]
    assert len(failed) == 5
    assert answers[1]["result"] == "Error during inference: choices[0].message is a str, not an object"
    assert answers[3]["result"] == "Error during inference: the reply has no choices[0].message"
    assert answers[4]["result"].startswith("Error during inference: the reply is not JSON")
    assert answers[5]["result"].startswith("Error during inference: HTTP 400 Bad Request")
    multi_answers = lines(tmp_path / "out" / "multi_turn_eval_result.json")
    assert multi_answers[0]["result"] == "Error during inference: choices[0].message is a str, not an object"
    assert multi_answers[1]["result"][0][-1] == "Done."
    assert not list((tmp_path / "out").glob("*.partial"))
    # BFCL's timing of each answered request: the server's token counts (0 where its reply has no
    # usage, as BFCL records an unknown count); a failed answer has none, as BFCL's has none.
    timing = ("input_token_count", "output_token_count", "latency")
    assert [answers[0][key] for key in timing[:2]] == [41, 9] and [answers[2][key] for key in timing[:2]] == [0, 0]
    assert all(isinstance(answers[i]["latency"], float) and answers[i]["latency"] > 0 for i in (0, 2))
    failures = [a for a in answers + multi_answers if str(a["result"]).startswith("Error during inference")]
    assert len(failures) == 6 and not any(key in failure for failure in failures for key in timing)
    steps = [len(turn) for turn in multi_answers[1]["result"]]
    assert all([len(turn) for turn in multi_answers[1][key]] == steps for key in timing)
    assert all(seconds > 0 for turn in multi_answers[1]["latency"] for seconds in turn)
    # The failed answers score as failures; the text parts were read as the text.
    scored = fcenv("evaluate", "--dataset_path", str(single), "--results", str(tmp_path / "out" / "tiny_eval_result.json"),
                   "--out", str(tmp_path / "v.jsonl"))
    assert scored.returncode == 0, scored.stderr
    assert [v["valid"] for v in lines(tmp_path / "v.jsonl")] == [True, False, True, False, False, False, False]


def test_tool_calls_that_cannot_be_read_fail_their_entry(tmp_path):
    single = subset(tmp_path / "data", "tiny_eval", 3)
    calls = [
        [{"id": "a", "type": "function", "function": {"name": "set_alarm", "arguments": '{"hour": 10, "minute": 16}'}}],
        [{"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{city: Prague"}}],
        "set_alarm()",
    ]
    server, url = serve(lambda body, number: (200, message(content=None, tool_calls=calls[number - 1])))
    try:
        done = fcenv("generate", "--endpoint", url, "--model_name_or_path", "m", "--tool_format", "hermes", "--dataset_path", str(single),
                     "--out", str(tmp_path / "out"), "--no-progress")
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    answers = [a["result"] for a in lines(tmp_path / "out" / "tiny_eval_result.json")]
    assert answers[0].startswith("<tool_call>\n") and '"set_alarm"' in answers[0]
    assert answers[1] == "Error during inference: the arguments of the tool call 'get_weather' are not JSON: '{city: Prague'"
    assert answers[2] == "Error during inference: tool_calls is a str, not a list"


def test_a_failing_server_ends_the_run_cleanly_and_keeps_the_finished_answers(tmp_path):
    single = subset(tmp_path / "data", "tiny_eval", 6)
    server, url = serve(lambda body, number: (200, message(content="No.")) if number <= 3 else
                        (503, {"error": "overloaded"}))
    try:
        done = fcenv("generate", "--endpoint", url, "--model_name_or_path", "m", "--dataset_path", str(single),
                     "--out", str(tmp_path / "out"), "--no-progress")
    finally:
        server.shutdown()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert f"fcenv generate: --endpoint {url}/chat/completions: HTTP 503 Service Unavailable" in done.stderr
    assert "(3 tries); the answers finished so far are in" in done.stderr
    kept = tmp_path / "out" / "tiny_eval_result.json.partial"
    assert str(kept) in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert [a["id"] for a in lines(kept)] == ["simple_python_0", "simple_python_1", "simple_python_2"]
    assert not (tmp_path / "out" / "tiny_eval_result.json").exists()


def test_a_rerun_goes_on_from_the_partial_file_of_an_interrupted_run(tmp_path):
    """The .partial file the error names is kept on a rerun: its answers
    stay, only the entries it lacks are asked, and a line a kill cut short is asked again."""
    single = subset(tmp_path / "data", "tiny_eval", 6)
    out = tmp_path / "out"
    kept = out / "tiny_eval_result.json.partial"
    server, url = serve(lambda body, number: (200, message(content="First run.")) if number <= 3 else
                        (503, {"error": "overloaded"}))
    try:
        first = fcenv("generate", "--endpoint", url, "--model_name_or_path", "m", "--dataset_path", str(single), "--out", str(out),
                      "--no-progress")
    finally:
        server.shutdown()
    assert first.returncode == 2 and str(kept) in first.stderr, first.stderr[-3000:]
    before = kept.read_text()
    assert len(before.splitlines()) == 3
    with kept.open("a") as handle:  # a fourth answer whose write a kill cut short
        handle.write(f'{{"id": "{load_tasks(single)[3].id}", "res')

    server, url = serve(lambda body, number: (200, message(content="Second run.")))
    try:
        second = fcenv("generate", "--endpoint", url, "--model_name_or_path", "m", "--dataset_path", str(single), "--out", str(out),
                       "--no-progress")
        asked = Server.requests
    finally:
        server.shutdown()
    assert second.returncode == 0, second.stderr[-3000:]
    assert asked == 3  # the fourth entry (its line cut short), the fifth and the sixth
    assert f"going on from {kept}: 3 answers kept, 3 to go" in second.stderr
    answers = lines(out / "tiny_eval_result.json")
    assert [a["id"] for a in answers] == [t.id for t in load_tasks(single)]
    assert [a["result"] for a in answers] == ["First run."] * 3 + ["Second run."] * 3
    assert not kept.exists()


def test_a_partial_file_of_something_else_is_refused_untouched(tmp_path):
    single = subset(tmp_path / "data", "tiny_eval", 4)
    kept = tmp_path / "out" / "tiny_eval_result.json.partial"
    kept.parent.mkdir()
    content = '{"id": "simple_python_0", "result": "No."}\n{"id": "live_simple_3", "result": "No."}\n'
    kept.write_text(content)
    server, url = serve(lambda body, number: (200, message(content="No.")))
    try:
        done = fcenv("generate", "--endpoint", url, "--model_name_or_path", "m", "--dataset_path", str(single), "--out", str(kept.parent),
                     "--no-progress")
        asked = Server.requests
    finally:
        server.shutdown()
    assert done.returncode == 2 and asked == 0 and "Traceback" not in done.stderr
    assert (f"fcenv generate: {kept}, line 2, entry 'live_simple_3': no entry with this id in the question file; "
            f"delete {kept} to answer every entry again") in done.stderr
    assert kept.read_text() == content


class Trickle(BaseHTTPRequestHandler):
    """A server that answers 200 and then sends its reply a byte every 0.2 s (for a minute at
    most): every read gets a byte well within any per-read timeout."""

    def do_POST(self):  # noqa: N802  (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(message(content="No.")).encode()
        padded = body + b" " * 300  # JSON allows trailing blanks: 60 s of them
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(padded)))
        self.end_headers()
        try:
            for byte in range(len(padded)):
                self.wfile.write(padded[byte:byte + 1])
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass  # the client gave up

    def log_message(self, *args):
        pass


def test_timeout_is_a_deadline_for_the_whole_request(tmp_path):
    """--timeout bounds a request, however slowly its reply trickles in."""
    single = subset(tmp_path / "data", "tiny_eval", 2)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1"
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "fcenv", "generate", "--endpoint", url, "--model_name_or_path", "m", "--data",
                               str(single), "--out", str(tmp_path / "out"), "--no-progress", "--timeout", "1"],
                              cwd=ROOT, capture_output=True, text=True, timeout=50, check=False)
    finally:
        server.shutdown()
    took = time.monotonic() - start
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert (f"fcenv generate: --endpoint {url}/chat/completions: TimeoutError: no complete reply within 1 s "
            "(--timeout) (3 tries)") in done.stderr
    assert took < 30  # three tries of a second, the pauses between them, the start
