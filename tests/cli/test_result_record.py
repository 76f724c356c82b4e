"""Result files that say how they were made: ``fcenv generate`` records the model, the chat mode,
the engine and the sampling settings in each result line (``fcenv.result_record``), and
``fcenv evaluate`` reads the answers in the recorded tool format without being told; a flag
that contradicts the record is refused before any verdict. Files without a record are read as
the flags say, as before. The answers come from a small OpenAI-compatible server started here
(no model)."""

from __future__ import annotations

import json
from pathlib import Path

from fcenv.data import load_tasks
from fcenv.result_record import RECORD_KEY
from tests.cli.test_generate_endpoint import fcenv, lines, message, serve, subset


def _right_calls(task) -> list[dict]:
    """The ground truth's first possibility, as OpenAI's parsed tool calls."""
    calls = []
    for number, call in enumerate(task.ground_truth):
        (name, params), = call.items()
        arguments = {key: values[0] for key, values in params.items() if values[0] != ""}
        calls.append({"id": f"c{number}", "type": "function",
                      "function": {"name": name, "arguments": json.dumps(arguments)}})
    return calls


def _generated_in_hermes(tmp_path: Path) -> tuple[Path, Path]:
    """Three tiny_eval entries answered rightly by a server, in --tool_format hermes."""
    single = subset(tmp_path / "data", "tiny_eval", 3)
    by_question = {t.question[0][0]["content"]: t for t in load_tasks(single)}

    def plan(body, number):
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return 200, message(content=None, tool_calls=_right_calls(by_question[question]))

    server, url = serve(plan)
    try:
        done = fcenv("generate", "--endpoint", url, "--model_name_or_path", "served-model", "--tool_format", "hermes",
                     "--greedy", "--max_new_tokens", "64", "--dataset_path", str(single), "--out", str(tmp_path / "out"), "--no-progress")
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    return single, tmp_path / "out" / "tiny_eval_result.json"


def test_evaluate_reads_the_recorded_tool_format_without_a_flag(tmp_path):
    single, results = _generated_in_hermes(tmp_path)
    answers = lines(results)
    assert all(a["result"].startswith("<tool_call>") for a in answers)
    record = answers[0][RECORD_KEY]
    assert (record["model"], record["engine"]) == ("served-model", "endpoint")
    assert record["endpoint"].startswith("http://127.0.0.1:")
    assert (record["tool_format"], record["system_prompt"], record["prompt_variation"]) == ("hermes", None, None)
    assert (record["greedy"], record["max_new_tokens"], record["seed"], record["samples"]) == (True, 64, 1, 1)
    verdicts = tmp_path / "v.jsonl"
    for compat in ([], ["--compat", "bfcl"]):
        scored = fcenv("evaluate", "--dataset_path", str(single), "--results", str(results), "--out", str(verdicts),
                       *compat)
        assert scored.returncode == 0, scored.stderr
        assert [v["valid"] for v in lines(verdicts)] == [True, True, True], lines(verdicts)
        assert f"{results}: answers read in --tool_format hermes, as fcenv generate recorded them" in scored.stderr
    # The same answers without their record are read as the flags say, as before: a prompting
    # model's, whose decoder reads no call in a <tool_call> block.
    bare = tmp_path / "bare_result.json"
    bare.write_text("".join(json.dumps({"id": a["id"], "result": a["result"]}) + "\n" for a in answers))
    scored = fcenv("evaluate", "--dataset_path", str(single), "--results", str(bare), "--out", str(verdicts),
                   "--compat", "bfcl")
    assert scored.returncode == 0, scored.stderr
    assert {v["error_type"] for v in lines(verdicts)} == {"ast_decoder:decoder_failed"}
    scored = fcenv("evaluate", "--dataset_path", str(single), "--results", str(bare), "--out", str(verdicts),
                   "--compat", "bfcl", "--tool_format", "hermes")
    assert scored.returncode == 0 and [v["valid"] for v in lines(verdicts)] == [True] * 3, scored.stderr


def test_a_flag_that_contradicts_the_record_is_refused_naming_both(tmp_path):
    single, results = _generated_in_hermes(tmp_path)
    verdicts = tmp_path / "v.jsonl"
    prompting = tmp_path / "prompting_result.json"
    prompting.write_text("".join(json.dumps({"id": a["id"], "result": "[f()]", RECORD_KEY: {
        **a[RECORD_KEY], "tool_format": None}}) + "\n" for a in lines(results)))
    joined = tmp_path / "joined_result.json"
    joined.write_text(results.read_text() + prompting.read_text())
    for given, message_part in [
        ([str(results), "--tool_format", "llama_json"],
         f"--tool_format llama_json contradicts the record: the answers of {results} were generated in "
         f"--tool_format hermes (fcenv generate's record, line 1); leave out --tool_format"),
        ([str(prompting), "--tool_format", "hermes"],
         f"--tool_format hermes contradicts the record: the answers of {prompting} were generated in prompting "
         f"mode (no --tool_format)"),
        ([str(results), "--handler", "python"], f"--handler python reads prompting answers, and the answers of "
                                                f"{results} were generated in --tool_format hermes"),
        ([str(joined), "--partial"], f"{joined}: its lines were generated in different modes, --tool_format hermes "
                                     f"(line 1), prompting mode (no --tool_format) (line 4)"),
    ]:
        refused = fcenv("evaluate", "--dataset_path", str(single), "--results", *given, "--out", str(verdicts))
        assert refused.returncode == 2 and message_part in refused.stderr, (given, refused.stderr)
        assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr
        assert not verdicts.exists()
    # A flag that agrees with the record is no contradiction.
    scored = fcenv("evaluate", "--dataset_path", str(single), "--results", str(results), "--out", str(verdicts),
                   "--tool_format", "hermes")
    assert scored.returncode == 0 and [v["valid"] for v in lines(verdicts)] == [True] * 3, scored.stderr
