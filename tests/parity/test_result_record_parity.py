"""The record ``fcenv generate`` writes in each result line (``fcenv.result_record``), and the
latency and token counts it writes beside it, are ignored by BFCL's scoring: the same answers,
with and without them, read by bfcl-eval's own ``load_file`` and scored by its ``evaluate_task``
(the format-sensitivity set's runner, on a slice), give the same score file."""

from __future__ import annotations

import json

import pytest

from fcenv.chat_mode import ChatMode
from fcenv.cli import build_parser
from fcenv.format_sensitivity import load_set
from fcenv.result_record import RECORD_KEY
from harness.format_answers import render_answer
from harness.generators import answer_calls

pytestmark = pytest.mark.oracle

CONFIGS = ["ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=plaintext&style=classic",
           "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic"]


def test_bfcls_runner_scores_recorded_lines_as_bare_ones(oracle, bfcl_dir, tmp_path):
    import random

    from fcenv.algos.generate import generation_record

    id_file = bfcl_dir / "BFCL_v4_format_sensitivity.json"
    args = build_parser().parse_args(["generate", "--dataset_path", str(id_file), "--out", str(tmp_path / "out"),
                                      "--greedy"])
    record = generation_record(args, ChatMode(), id_file, 0)
    rng = random.Random(7)
    bare = []
    for number, entry in enumerate(load_set(id_file, CONFIGS, 4)):
        right = render_answer(answer_calls(entry.task, rng, omit=False), entry.variation)
        bare.append({"id": entry.id, "result": right if number % 3 else "I cannot help."})
    files = {}
    timed = {"input_token_count": 412, "output_token_count": 9, "latency": 0.37}  # as generate writes a single turn's
    for name, lines in (("bare", bare), ("recorded", [{**line, **timed, RECORD_KEY: record} for line in bare])):
        files[name] = tmp_path / name / "BFCL_v4_format_sensitivity_result.json"
        files[name].parent.mkdir()
        files[name].write_text("".join(json.dumps(line) + "\n" for line in lines))
    plain, recorded = oracle.run([{"op": "format_sensitivity", "results": str(files[name]), "model": "Org/M",
                                   "partial": True} for name in ("bare", "recorded")])
    assert "driver_error" not in plain, plain
    assert plain["header"]["total_count"] == 8 and 0 < plain["header"]["correct_count"] < 8
    assert recorded == plain
