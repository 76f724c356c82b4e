"""``fcenv generate``: a model's answers written as BFCL result files that ``fcenv evaluate``
scores, from a local checkpoint with a trained adapter, and from an OpenAI-compatible server
(a small one started here on 127.0.0.1, serving the tiny model with plain ``transformers``)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch

pytest.importorskip("peft")
from fcenv.algos.store.results import read_metrics
from fcenv.algos.tiny.build import BUNDLED_EVAL, TINY_SYSTEM_PROMPT, TINY_TRAIN
from fcenv.data import load_tasks
from tests.support.runs import MULTI_TURN_EVAL, fcenv, make_runner

ROOT = Path(__file__).resolve().parents[2]
TINY_EVAL = BUNDLED_EVAL[TINY_TRAIN]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_trained_adapter_answers_as_the_trainer_measured(tiny_model, tmp_path):
    runner = make_runner(tiny_model, tmp_path / "results", "--eval_interval", "1", "--num_env_steps", "4")
    run = runner.run()
    trainer_greedy = [m for m in read_metrics(run) if "heldout_greedy/accuracy" in m][-1]["heldout_greedy/accuracy"]
    out = tmp_path / "answers"
    done = fcenv("generate", "--run", str(run), "--data", str(TINY_EVAL), "--out", str(out), "--greedy",
                 "--max_new_tokens", "24", "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    results = out / f"{TINY_EVAL.stem}_result.json"
    lines = _lines(results)
    assert [line["id"] for line in lines] == [t.id for t in load_tasks(str(TINY_EVAL))]
    assert all(isinstance(line["result"], str) for line in lines)
    scored = fcenv("evaluate", "--compat", "bfcl", "--data", str(TINY_EVAL), "--results", str(results),
                   "--out", str(tmp_path / "verdicts.jsonl"))
    assert scored.returncode == 0, scored.stderr
    verdicts = _lines(tmp_path / "verdicts.jsonl")
    accuracy = sum(v["valid"] for v in verdicts) / len(verdicts)
    # Greedy answers of the same adapter; batches differ, so a near-tie may rarely flip.
    assert abs(accuracy - trainer_greedy) <= 2 / len(verdicts)


def test_multi_turn_answers_run_on_the_backends_turn_by_turn(tiny_model, tmp_path):
    done = fcenv("generate", "--model", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT, "--data",
                 str(MULTI_TURN_EVAL), "--out", str(tmp_path), "--n", "2", "--max_new_tokens", "16", "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    tasks = load_tasks(str(MULTI_TURN_EVAL))
    for sample in range(2):
        results = tmp_path / f"{MULTI_TURN_EVAL.stem}_result_sample{sample}.json"
        lines = _lines(results)
        assert [line["id"] for line in lines] == [t.id for t in tasks]
        for line, task in zip(lines, tasks):
            # every turn answered, each with at least one step; a turn that did not hit the step
            # limit ends with a step that made no call
            assert len(line["result"]) == len(task.question) and all(line["result"])
        scored = fcenv("evaluate", "--data", str(MULTI_TURN_EVAL), "--results", str(results),
                       "--out", str(tmp_path / f"verdicts{sample}.jsonl"))
        assert scored.returncode == 0, scored.stderr


def _first(source: Path, folder: Path, count: int) -> Path:
    """A bundled split's first ``count`` entries, with their answers."""
    for src, dst in ((source, folder / source.name),
                     (source.parent / "possible_answer" / source.name, folder / "possible_answer" / source.name)):
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text("".join(src.read_text().splitlines(keepends=True)[:count]))
    return folder / source.name


def test_each_answer_records_bfcls_latency_and_token_counts_of_its_model_calls(tiny_model, tmp_path):
    """BFCL's generation writes each entry's latency and token counts (a single-turn entry's
    numbers, a multi-turn entry's turns of step numbers), which its card's cost and latency
    read; ours writes them in the same shapes: the seconds of the batched call that answered,
    the tokens the model read (the logged prompt's) and wrote (the answer's, its stop token
    included when drawn)."""
    from fcenv.algos.model.loading import load_tokenizer

    files = [_first(TINY_EVAL, tmp_path / "data", 4), _first(MULTI_TURN_EVAL, tmp_path / "data", 2)]
    done = fcenv("generate", "--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT,
                 "--dataset_path", *map(str, files), "--out", str(tmp_path / "out"), "--greedy", "--max_new_tokens",
                 "16", "--include-input-log", "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    tokenizer = load_tokenizer(tiny_model)

    def tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False).input_ids)

    single, multi = (_lines(tmp_path / "out" / f"{file.stem}_result.json") for file in files)
    timing = ("input_token_count", "output_token_count", "latency")
    read, written = [], []  # (recorded, the tokenizer's count) of each model call
    for line in single:
        assert isinstance(line["latency"], float) and line["latency"] > 0
        assert all(type(line[key]) is int for key in timing[:2])
        read.append((line["input_token_count"], tokens(line["inference_log"][0]["content"]["formatted_prompt"])))
        written.append((line["output_token_count"], tokens(line["result"])))
    for line in multi:
        steps = [len(turn) for turn in line["result"]]
        assert steps and all([len(turn) for turn in line[key]] == steps for key in timing)
        assert all(isinstance(seconds, float) and seconds > 0 for turn in line["latency"] for seconds in turn)
        prompts = [entry["content"]["formatted_prompt"] for turn in line["inference_log"] for key, step in turn.items()
                   if key.startswith("step_") for entry in step if entry["role"] == "inference_input"]
        read += zip(sum(line["input_token_count"], []), map(tokens, prompts))
        written += zip(sum(line["output_token_count"], []), map(tokens, sum(line["result"], [])))
    assert len(read) == len(written) > 10 and all(recorded == counted for recorded, counted in read)
    # the stop token, drawn where the answer ends before --max_new_tokens, is not in the text
    assert all(counted <= recorded <= min(counted + 1, 16) for recorded, counted in written)


class _TinyServer(BaseHTTPRequestHandler):
    """POST /v1/chat/completions with the tiny model: its chat template and greedy ``generate``."""
    model = tokenizer = None
    requests = 0

    def do_POST(self):  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests += 1
        ids = self.tokenizer.apply_chat_template(body["messages"], add_generation_prompt=True, tokenize=True,
                                                 return_dict=False)
        prompt = torch.tensor([list(ids)])
        with torch.no_grad():
            out = self.model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                      max_new_tokens=body["max_tokens"], pad_token_id=self.tokenizer.eos_token_id)
        text = self.tokenizer.decode(out[0, prompt.shape[1]:], skip_special_tokens=True)
        reply = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def test_an_openai_compatible_endpoint_answers_like_the_local_model(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM

    from fcenv.algos.model.loading import load_tokenizer

    _TinyServer.model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    _TinyServer.tokenizer = load_tokenizer(tiny_model)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TinyServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        common = ["--data", str(TINY_EVAL), "--system_prompt", TINY_SYSTEM_PROMPT, "--greedy",
                  "--max_new_tokens", "16", "--no-progress"]
        remote = fcenv("generate", "--endpoint", f"http://127.0.0.1:{server.server_port}/v1", "--model", "tiny-test",
                       "--out", str(tmp_path / "remote"), *common)
        assert remote.returncode == 0, remote.stderr[-2000:]
    finally:
        server.shutdown()
    local = fcenv("generate", "--model", str(tiny_model), "--out", str(tmp_path / "local"), *common)
    assert local.returncode == 0, local.stderr[-2000:]
    name = f"{TINY_EVAL.stem}_result.json"
    remote_lines, local_lines = _lines(tmp_path / "remote" / name), _lines(tmp_path / "local" / name)
    assert _TinyServer.requests == len(remote_lines) == 150
    # One model, one template, greedy: the same answers (each line's record names its own model).
    assert [line["fcenv_generate"]["endpoint"] for line in remote_lines] == [f"http://127.0.0.1:{server.server_port}/v1"] * 150
    same = sum((r["id"], r["result"]) == (m["id"], m["result"]) for r, m in zip(remote_lines, local_lines))
    assert same >= 0.95 * len(local_lines)


def test_misuse_is_refused_before_any_model_loads(tmp_path):
    for args, message in [(["--data", "missing.json", "--out", str(tmp_path)], "no such file"),
                          (["--data", str(TINY_EVAL), "--out", str(tmp_path), "--n", "0"], "--n must be positive"),
                          (["--data", str(TINY_EVAL), "--out", str(tmp_path), "--run", str(tmp_path)],
                           "not a training run folder")]:
        done = fcenv("generate", *args)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["generate", "process-rewards"])
def test_an_unknown_rollout_engine_is_refused_before_any_work(command, tmp_path):
    out = tmp_path / "out"
    flags = ["--data", "tiny_eval"] if command == "generate" else []
    done = fcenv(command, *flags, "--out", str(out), "--rollout_engine", "nope", "--no-progress")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--rollout_engine 'nope': no such rollout engine (registered: hf, vllm)" in done.stderr
    assert not out.exists()


def test_a_memory_entry_s_input_log_holds_its_own_conversation(bfcl_dir, tmp_path):
    """A memory entry's inference_log held every prerequisite conversation of
    its scenario (25 steps for a notetaker question), its begin_of_turn_query the first
    prerequisite's message; BFCL logs each entry's own conversation. The model here is a fixed
    reply ("Noted."): what is under test is the log the command writes of the steps played."""
    import gymnasium as gym

    from fcenv.algos.generate import Reply, play_entries, records_turns, result_line
    from fcenv.algos.questions import env_questions
    from harness.agentic_slices import write_slices

    slices = write_slices(bfcl_dir, tmp_path, memory=1, web=1)
    env = gym.make("fcenv/FunctionCalling-v0", dataset_path=str(slices["memory"]))
    task = env.unwrapped.tasks[0]
    assert task.category == "memory_kv" and len(task.prerequisites) == 5
    asked = []

    def respond(chats, ids):
        asked.extend(chats)
        return [Reply("Noted.", {"formatted_prompt": chat[-1]["content"]}) for chat in chats]

    (answer,) = play_entries([env], [(0, 0)], respond, questions=env_questions(env))
    line = result_line(task.id, answer, records_turns(task), input_log=True)
    assert len(asked) > 20 and line["result"] == [["Noted."]]
    question = task.question[0][-1]["content"]
    assert line["inference_log"] == [{
        "begin_of_turn_query": [m for m in asked[-1] if m["role"] in ("system", "user")],
        "step_0": [{"role": "inference_input", "content": {"formatted_prompt": question}},
                   {"role": "assistant", "content": "Noted."}]}]
    assert line["inference_log"][0]["begin_of_turn_query"][-1]["content"] == question


def test_going_on_with_the_input_log_answers_again_what_was_written_without_it(tiny_model, tmp_path):
    """A run with --include-input-log going on from the .partial file of an
    interrupted run without it kept those answers without their logs, and the result file mixed
    lines with and without inference_log. The entries are named and answered again."""
    common = ["--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT, "--dataset_path",
              str(TINY_EVAL), "--greedy", "--max_new_tokens", "8", "--out", str(tmp_path), "--no-progress"]
    done = fcenv("generate", *common)
    assert done.returncode == 0, done.stderr[-2000:]
    result = tmp_path / f"{TINY_EVAL.stem}_result.json"
    partial = tmp_path / f"{TINY_EVAL.stem}_result.json.partial"
    lines = result.read_text().splitlines(keepends=True)
    partial.write_text("".join(lines[:5]))  # what an interrupted run leaves: five answers, no logs
    result.unlink()
    done = fcenv("generate", *common, "--include-input-log")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (f"--include-input-log: 5 answers in {partial} were written without an input log (a run without the "
            f"flag); their entries are answered again") in done.stderr
    written = _lines(result)
    assert len(written) == len(lines) and all("inference_log" in line for line in written)
    assert not partial.exists()
    # The other way round, the logs a .partial holds are left out of a run without the flag.
    partial.write_text("".join(json.dumps(line) + "\n" for line in written[:5]))
    result.unlink()
    done = fcenv("generate", *common)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not any("inference_log" in line for line in _lines(result))
