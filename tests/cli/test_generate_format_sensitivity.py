"""``fcenv generate`` answers BFCL v4's format-sensitivity set (a slice of it,
as a CPU user would run) under each configuration's own prompt, in the result file BFCL names
for it, and ``fcenv evaluate`` scores that file with each configuration's decoder; ``--run``
carries the prompt variation a run was trained with."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.format_sensitivity import load_set  # noqa: E402
from fcenv.prompt_variations import PromptVariation, format_sensitivity_configs  # noqa: E402
from fcenv.prompts import hinted_functions  # noqa: E402
from tests.support.runs import fcenv  # noqa: E402

JSON_TAGGED_XML_DOCS = "ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=plaintext&style=classic"
MARKDOWN = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic"
SLICE = ["--sensitivity_configs", f"{JSON_TAGGED_XML_DOCS},{MARKDOWN}", "--sensitivity_entries", "2"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_slice_of_the_set_is_answered_under_each_configurations_prompt_and_scored(tiny_model, bfcl_dir, tmp_path):
    id_file = bfcl_dir / "BFCL_v4_format_sensitivity.json"
    out = tmp_path / "result" / "tiny" / "format_sensitivity"
    done = fcenv("generate", "--model_name_or_path", str(tiny_model), "--dataset_path", str(id_file), *SLICE,
                 "--context_window", "4096", "--max_new_tokens", "8", "--include-input-log", "--out", str(out),
                 "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    results = out / "BFCL_v4_format_sensitivity_result.json"
    assert done.stdout.strip().splitlines()[-1] == str(results)
    lines = _lines(results)
    entries = load_set(id_file, [JSON_TAGGED_XML_DOCS, MARKDOWN], 2)
    # The set's own ids, in its order: two entries, each under both configurations.
    assert [line["id"] for line in lines] == [entry.id for entry in entries]
    assert [line["id"].split(":")[1] for line in lines] == [JSON_TAGGED_XML_DOCS, MARKDOWN] * 2
    for line, entry in zip(lines, entries):
        asked = line["inference_log"][0]["content"]["formatted_prompt"]
        docs = hinted_functions(entry.task.functions, "python")
        assert entry.variation.system_prompt(docs) in asked
        other = MARKDOWN if entry.config == JSON_TAGGED_XML_DOCS else JSON_TAGGED_XML_DOCS
        assert PromptVariation.parse(other).system_prompt(docs) not in asked
    verdicts = tmp_path / "verdicts.jsonl"
    scored = fcenv("evaluate", "--dataset_path", str(id_file), "--results", str(results), *SLICE,
                   "--out", str(verdicts))
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert [(v["id"], v["config"]) for v in _lines(verdicts)] == [(e.id, e.config) for e in entries]
    assert "format sensitivity: max delta" in scored.stdout and "across 2 configurations" in scored.stdout
    # The slice is not the whole set: scoring it as the set is refused, unless asked for (--partial).
    whole = fcenv("evaluate", "--dataset_path", str(id_file), "--results", str(results), "--out", str(verdicts))
    assert whole.returncode != 0 and "5196" in whole.stderr


def test_misuse_of_the_set_is_refused_before_any_model_loads(bfcl_dir, tmp_path):
    id_file = str(bfcl_dir / "BFCL_v4_format_sensitivity.json")
    out = ["--out", str(tmp_path / "out"), "--no-progress"]
    for args, message in [
        (["--dataset_path", id_file, "--tool_format", "hermes"], "leave out --tool_format"),
        (["--dataset_path", id_file, "--prompt_variation", MARKDOWN], "(--sensitivity_configs picks them)"),
        (["--dataset_path", id_file, "--sensitivity_configs", "ret_fmt=yaml"],
         "--sensitivity_configs: 'ret_fmt=yaml' picks none of BFCL's configurations"),
        (["--dataset_path", "tiny_eval", "--sensitivity_entries", "2"],
         "--sensitivity_entries pick part of BFCL's format-sensitivity set"),
        (["--dataset_path", "tiny_eval", "--prompt_variation", "random"], "--prompt_variation random draws"),
        (["--dataset_path", str(tmp_path / "BFCL_v4_format_sensitivity.json")], "cannot read the format-sensitivity id file"),
    ]:
        done = fcenv("generate", *args, *out)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "out").exists()


def _fake_run(folder: Path, prompt_variation: str) -> Path:
    """A run folder as `open_run` reads it, trained with a prompt variation."""
    (folder / "checkpoints" / "iter_1" / "actor").mkdir(parents=True)
    saved = {"max_new_tokens": 16, "temperature": 0.7, "prompt_variation": prompt_variation,
             "resolved": {"base_model": str(folder / "base"), "tool_format": None, "system_prompt": "Mine: {functions}",
                          "context_window": 512, "train_path": "/data/train.json", "eval_path": "/data/eval.json",
                          "eval_indices": []}}
    (folder / "args.json").write_text(json.dumps(saved))
    return folder


def test_run_carries_its_prompt_variation_and_refuses_another(tmp_path):
    from fcenv.algos.from_run import apply_run
    from fcenv.arguments import UsageError
    from fcenv.cli import build_parser

    run = _fake_run(tmp_path / "run", MARKDOWN)

    def applied(*extra: str) -> argparse.Namespace:
        args = build_parser().parse_args(["generate", "--run", str(run), "--dataset_path", "tiny_eval", "--out", "o",
                                          *extra])
        apply_run(args)
        return args

    args = applied()
    # The variation writes the system prompt: the run's own is not carried beside it.
    assert (args.prompt_variation, args.system_prompt, args.tool_format) == (MARKDOWN, "", "")
    assert applied("--prompt_variation", MARKDOWN).prompt_variation == MARKDOWN
    for extra in (["--prompt_variation", JSON_TAGGED_XML_DOCS], ["--prompt_variation", "none"],
                  ["--system_prompt", "Mine: {functions}"]):
        with pytest.raises(UsageError, match=re.escape(f"--run {run} was trained with --prompt_variation {MARKDOWN}, "
                                                       f"and {extra[0]} would render its chats otherwise: leave it "
                                                       f"out")):
            applied(*extra)
    plain = _fake_run(tmp_path / "plain", "none")
    args = build_parser().parse_args(["generate", "--run", str(plain), "--dataset_path", "tiny_eval", "--out", "o",
                                      "--prompt_variation", "none"])
    apply_run(args)
    assert (args.prompt_variation, args.system_prompt) == ("", "Mine: {functions}")


def test_a_prompt_variation_renders_every_entry_and_its_decoder_scores_them(tiny_model, tmp_path):
    from fcenv.algos.tiny.build import BUNDLED_EVAL, TINY_TRAIN

    source = BUNDLED_EVAL[TINY_TRAIN]
    data = tmp_path / "few.json"
    (tmp_path / "possible_answer").mkdir()
    data.write_text("".join(source.read_text().splitlines(keepends=True)[:3]))
    (tmp_path / "possible_answer" / "few.json").write_text(
        "".join((source.parent / "possible_answer" / source.name).read_text().splitlines(keepends=True)[:3]))
    variation = PromptVariation.parse(JSON_TAGGED_XML_DOCS)
    done = fcenv("generate", "--model_name_or_path", str(tiny_model), "--dataset_path", str(data), "--prompt_variation",
                 JSON_TAGGED_XML_DOCS, "--context_window", "4096", "--max_new_tokens", "8", "--include-input-log",
                 "--out", str(tmp_path / "out"), "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"score their answers with `fcenv evaluate --handler {variation.handler}`" in done.stderr
    from fcenv.data import load_tasks

    lines = _lines(tmp_path / "out" / "few_result.json")
    for line, task in zip(lines, load_tasks(str(data)), strict=True):
        asked = line["inference_log"][0]["content"]["formatted_prompt"]
        assert variation.system_prompt(hinted_functions(task.functions, "python")) in asked
    scored = fcenv("evaluate", "--dataset_path", str(data), "--results", str(tmp_path / "out" / "few_result.json"),
                   "--handler", variation.handler, "--out", str(tmp_path / "verdicts.jsonl"))
    assert scored.returncode == 0, scored.stderr[-3000:]


def test_an_id_file_listing_entries_no_variation_reaches_is_refused(tiny_model, bfcl_dir, tmp_path):
    """An id file listing a Java entry (BFCL varies single-turn Python entries
    only) was answered, and that entry's verdicts counted in each configuration's accuracy; now
    ``fcenv generate`` and ``fcenv evaluate`` refuse it as bench.heldout does, naming the file,
    the entry and the category (one rule: ``fcenv.prompt_variations.reaches``)."""
    for name in ("BFCL_v4_simple_python.json", "BFCL_v4_simple_java.json", "possible_answer"):
        (tmp_path / name).symlink_to(bfcl_dir / name)
    id_file = tmp_path / "BFCL_v4_format_sensitivity.json"
    id_file.write_text(json.dumps({"simple_python": ["simple_python_0"], "simple_java": ["simple_java_0"]}))
    expected = (f"{id_file}, entry 'simple_java_0', field 'simple_java': 1 listed entries are not varied "
                f"(simple_java): BFCL varies the prompt of single-turn Python entries only; list those alone")
    out = tmp_path / "out"
    done = fcenv("generate", "--model_name_or_path", str(tiny_model), "--dataset_path", str(id_file),
                 "--sensitivity_configs", MARKDOWN, "--max_new_tokens", "4", "--context_window", "4096",
                 "--out", str(out), "--no-progress")
    assert done.returncode == 2 and expected in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert not out.exists()
    # The answers an earlier version wrote for the file: each entry under the one configuration.
    configs = format_sensitivity_configs()
    at = configs.index(MARKDOWN)
    results = tmp_path / "results.json"
    results.write_text("".join(json.dumps({"id": f"format_sensitivity_{position * len(configs) + at}:{MARKDOWN}:{entry}",
                                           "result": "[]"}) + "\n"
                               for position, entry in enumerate(["simple_python_0", "simple_java_0"])))
    scored = fcenv("evaluate", "--dataset_path", str(id_file), "--results", str(results), "--sensitivity_configs",
                   MARKDOWN, "--out", str(tmp_path / "verdicts.jsonl"))
    assert scored.returncode == 2 and expected in scored.stderr and "Traceback" not in scored.stderr, scored.stderr
    assert not (tmp_path / "verdicts.jsonl").exists()
