"""A tool format a user registers (an entry point in the ``fcenv.tool_formats`` group) is
accepted wherever a built-in one is: `train_fctncalling.py`, `fcenv generate`, `fcenv
evaluate` and `fcenv process-rewards` take it as ``--tool_format`` and speak it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fcenv.data import load_tasks
from fcenv.multi_turn.executor import parse_call_text
from tests.support.runs import MULTI_TURN_EVAL

ROOT = Path(__file__).resolve().parents[2]

# A family of the user's own: one "CALL name {json arguments}" line per call.
FAMILY = '''
import json
from pathlib import Path

from fcenv.tool_formats import ToolFormat
from fcenv.handlers import Call, DecodeError


def decode(text):
    calls = []
    for line in text.strip().splitlines():
        if not line.startswith("CALL "):
            raise DecodeError(f"not a call line: {line!r}")
        name, _, arguments = line[len("CALL "):].partition(" ")
        arguments = json.loads(arguments)
        if not isinstance(arguments, dict):
            raise DecodeError("the arguments are not an object")
        calls.append(Call(name, arguments))
    if not calls:
        raise DecodeError("no calls")
    return calls


def write(calls):
    return "\\n".join(f"CALL {c.name} {json.dumps(c.arguments)}" for c in calls)


TAGGED = ToolFormat("callines", decode, decode, write, str(Path(__file__).with_name("callines.jinja")))
'''

TEMPLATE = (
    "{%- if tools %}{{- '<|system|>Tools:' }}{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
    "{{- '\\n' }}{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}{{- '<|assistant|>' + (m.content or '') }}"
    "{%- for c in m.tool_calls or [] %}{{- '\\nCALL ' + c.function.name + ' ' + (c.function.arguments | tojson) }}"
    "{%- endfor %}{{- '\\n' }}"
    "{%- elif m.role == 'tool' %}{{- '<|tool|>' + m.content + '\\n' }}"
    "{%- else %}{{- '<|' + m.role + '|>' + m.content + '\\n' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|assistant|>' }}{%- endif %}"
)


def _site(tmp_path: Path) -> Path:
    """The user's package and its installed metadata, as pip leaves them."""
    site = tmp_path / "site"
    (site / "callines").mkdir(parents=True)
    (site / "callines" / "__init__.py").write_text(FAMILY)
    (site / "callines" / "callines.jinja").write_text(TEMPLATE)
    info = site / "callines-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: callines\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fcenv.tool_formats]\ncallines = callines:TAGGED\n")
    return site


def _run(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)


def test_a_registered_tool_format_is_accepted_by_every_command(tiny_model, tmp_path):
    site = _site(tmp_path)
    tasks = load_tasks(str(MULTI_TURN_EVAL))

    # fcenv evaluate: the ground truth written in the user's format passes, every entry.
    truth = tmp_path / "truth.json"
    truth.write_text("".join(json.dumps({"id": t.id, "result": [
        ["\n".join(f"CALL {name} {json.dumps(kwargs)}" for name, _, kwargs in map(parse_call_text, calls)), "Done."]
        if calls else ["Done."] for calls in t.ground_truth]}) + "\n" for t in tasks))
    done = _run(site, "-m", "fcenv", "evaluate", "--data", str(MULTI_TURN_EVAL), "--results", str(truth),
                "--out", str(tmp_path / "verdicts.jsonl"), "--tool_format", "callines")
    assert done.returncode == 0, done.stderr[-2000:]
    verdicts = [json.loads(line) for line in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    assert len(verdicts) == len(tasks) and all(v["valid"] for v in verdicts)

    # fcenv generate: every turn answered, the tools through the user's template.
    done = _run(site, "-m", "fcenv", "generate", "--model", str(tiny_model), "--tool_format", "callines", "--data",
                str(MULTI_TURN_EVAL), "--out", str(tmp_path / "gen"), "--max_new_tokens", "8", "--greedy",
                "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in (tmp_path / "gen" / f"{MULTI_TURN_EVAL.stem}_result.json").read_text().splitlines()]
    assert [line["id"] for line in lines] == [t.id for t in tasks]

    # train_fctncalling.py: a run in the user's format, its rollouts rendered by its template.
    done = _run(site, "train_fctncalling.py", "--model_name_or_path", str(tiny_model), "--dataset_path",
                "multi_turn_train", "--tool_format", "callines", "--results_dir", str(tmp_path / "results"),
                "--n_rollout_threads", "4", "--num_env_steps", "4", "--max_new_tokens", "8", "--lora_r", "4",
                "--warmup_steps", "2", "--eval_interval", "0", "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    saved = json.loads(next((tmp_path / "results").rglob("args.json")).read_text())
    assert saved["tool_format"] == "callines" and saved["resolved"]["tool_format"] == "callines"

    # fcenv process-rewards: samples in the user's format, the tools in its template.
    done = _run(site, "-m", "fcenv", "process-rewards", "--model_name_or_path", str(tiny_model), "--tool_format",
                "callines", "--dataset_path", "multi_turn_train", "--tasks", "2", "--trajectories", "1",
                "--completions", "1", "--threads", "2", "--max_new_tokens", "8", "--out", str(tmp_path / "lpr"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["tool_format"] == "callines"
    row = json.loads((tmp_path / "lpr" / "trajectories.jsonl").read_text().splitlines()[0])
    assert row["tools"]


def test_an_unregistered_tool_format_is_refused_by_name(tmp_path):
    """Without the user's package on the path, the same flag is a one-line usage error."""
    done = _run(tmp_path, "-m", "fcenv", "evaluate", "--data", str(MULTI_TURN_EVAL), "--results",
                str(tmp_path / "none.json"), "--tool_format", "callines")
    assert done.returncode == 2 and "callines" in done.stderr and "Traceback" not in done.stderr
