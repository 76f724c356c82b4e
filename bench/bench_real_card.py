"""A real model's BFCL card: per-category accuracy on a fixed sample of BFCL's entries, greedy, in
FC mode (the tools through the model's own chat template, answers read as BFCL's FC handler for
its family reads them) and in prompting mode (BFCL's system prompt, BFCL's decoder), with the
wall time of each.

Each mode is one ``fcenv generate`` (the model loaded once, entries answered in batches by the
``hf`` engine, or by vLLM with ``--rollout_engine vllm``, whose prefix cache serves the start of
a multi-turn step's chat again) and one ``fcenv evaluate``. The sample is ``fcenv/bfcl_sample.py``'s: ``k``
entries spread evenly over each category's file (for ``memory``, BFCL's memory file: ``k``
questions of each scenario, each played in the three memory categories after its scenario's
prerequisite conversations). BFCL's summary groups and overall are estimated from the sample
with fcenv's score card; web search needs the live web and is not measured. Results accumulate in ``--report`` (one key
per mode and category, so single- and multi-turn runs can be made apart); the answers are kept
in ``--answers`` (model text only), where ``tests/real_models`` checks fcenv's verdicts on every
one of them against BFCL's own handler and checker.

Run: ``python -m bench.bench_real_card [--categories ...] [--per_category 100] [--modes fc prompting]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from fcenv.bfcl_sample import MULTI_TURN, SENSITIVITY_FILE, SINGLE_TURN, write_sample, write_sensitivity_sample
from fcenv.bfcl_data import DEFAULT_DIR as BFCL_DIR
from fcenv.flags import ENGINE, MODEL, SAMPLE, SAMPLING, add_group, check_parsed
from fcenv.pretrained import DEFAULT_DIR as MODELS_DIR
from fcenv.score_card import CATEGORY_SIZES, ScoreCard, card_from_accuracies, render

ROOT = Path(__file__).resolve().parents[1]
MEMORY_CATEGORIES = ("memory_kv", "memory_vector", "memory_rec_sum")
ORDER = SINGLE_TURN + MULTI_TURN + MEMORY_CATEGORIES
GROUPS = ("non_live", "live", "irrelevance", "multi_turn", "memory", "agentic", "overall")
MODES = {"fc": ["--tool_format", "hermes"], "prompting": []}
SCORING = {"fc": ["--tool_format", "hermes"], "prompting": ["--compat", "bfcl"]}


def run(cmd: list[str]) -> float:
    start = time.perf_counter()
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)
    return time.perf_counter() - start


def card_mode(args: argparse.Namespace, mode: str, files: list[Path], work: Path) -> dict:
    out = work / mode
    generate = [sys.executable, "-m", "fcenv", "generate", "--model_name_or_path", args.model_name_or_path,
                *MODES[mode], "--greedy", "--max_new_tokens", str(args.max_new_tokens),
                "--n_rollout_threads", str(args.n_rollout_threads),
                "--rollout_engine", args.rollout_engine, "--kv_cache_mib", str(args.kv_cache_mib), "--no-progress",
                "--out", str(out), "--dataset_path", *map(str, files)]
    seconds = run(generate)
    results = [out / f"{f.stem}_result.json" for f in files]
    verdicts = work / f"{mode}_verdicts.jsonl"
    run([sys.executable, "-m", "fcenv", "evaluate", *SCORING[mode], "--dataset_path", *map(str, files),
         "--results", *map(str, results), "--out", str(verdicts)])
    kept = Path(args.answers) / mode
    kept.mkdir(parents=True, exist_ok=True)
    for path in results:
        shutil.copy(path, kept / path.name)
    categories = category_figures(verdicts)
    return {"generate_seconds": round(seconds, 1), "entries": sum(c["entries"] for c in categories.values()),
            "engine": args.rollout_engine, "generate_command": " ".join(generate[1:]).replace(str(work), "SAMPLE"),
            "categories": categories}


def sensitivity_card(args: argparse.Namespace, work: Path) -> dict:
    """Format sensitivity, which BFCL scores for prompting models: ``args.format_sensitivity``
    entries of BFCL's set (``write_sensitivity_sample``) asked under each of its 26 prompt
    variations. The answers are kept under the whole set's ids (a sample numbers its entries
    anew), so ``fcenv evaluate --partial`` and BFCL's runner score them against the whole set."""
    from fcenv.format_sensitivity import load_set, sensitivity, split_id

    sample = write_sensitivity_sample(Path(args.bfcl_dir), args.format_sensitivity, work / "sensitivity")
    out = work / "sensitivity_out"
    model = ["--run", args.run] if args.run else ["--model_name_or_path", args.model_name_or_path]
    generate = [sys.executable, "-m", "fcenv", "generate", *model, "--greedy", "--max_new_tokens", str(args.max_new_tokens),
                "--n_rollout_threads", str(args.n_rollout_threads),
                "--rollout_engine", args.rollout_engine, "--kv_cache_mib", str(args.kv_cache_mib), "--no-progress",
                "--out", str(out), "--dataset_path", str(sample)]
    seconds = run(generate)
    whole_set = Path(args.bfcl_dir) / SENSITIVITY_FILE
    set_ids = {(entry.config, entry.task.id): entry.id for entry in load_set(whole_set)}
    result_name = SENSITIVITY_FILE.replace(".json", "_result.json")
    lines = [json.loads(line) for line in (out / result_name).read_text().splitlines()]
    kept = Path(args.answers) / "format_sensitivity" / result_name
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("".join(json.dumps({**line, "id": set_ids[split_id(line["id"])]}) + "\n" for line in lines))
    verdicts = work / "sensitivity_verdicts.jsonl"
    run([sys.executable, "-m", "fcenv", "evaluate", "--dataset_path", str(whole_set), "--results", str(kept), "--partial",
         "--out", str(verdicts)])
    figures = sensitivity((v["config"], v["valid"]) for v in map(json.loads, verdicts.read_text().splitlines()))
    return {"entries": args.format_sensitivity, "answers": len(lines), "generate_seconds": round(seconds, 1),
            "engine": args.rollout_engine, "accuracy": round(figures.accuracy, 4), "max_delta": figures.max_delta,
            "std": figures.std, "by_config": {c: list(counts) for c, counts in figures.by_config.items()},
            "generate_command": " ".join(generate[1:]).replace(str(work), "SAMPLE")}


def category_figures(verdicts: Path) -> dict[str, dict]:
    """Entries, valid ones and accuracy per category of an ``fcenv evaluate`` verdict file."""
    counts = Counter(), Counter()
    for line in map(json.loads, verdicts.read_text().splitlines()):
        category = line["id"].rsplit("_", 1)[0]
        counts[0][category] += 1
        counts[1][category] += bool(line["valid"])
    return {c: {"entries": n, "valid": counts[1][c], "accuracy": round(counts[1][c] / n, 4)}
            for c, n in sorted(counts[0].items())}


def estimated_card(categories: dict) -> ScoreCard:
    """BFCL's card with each measured category's sample accuracy standing for the whole category."""
    return card_from_accuracies({c: (v["accuracy"], CATEGORY_SIZES[c]) for c, v in categories.items()})


def summaries(categories: dict) -> dict[str, float]:
    """BFCL's summary groups, estimated from the sample's per-category accuracies by fcenv's score
    card (``fcenv.score_card``, BFCL's averaging rules), each category weighing as BFCL's whole
    category does. A group is given once every category in it was measured. Web search needs
    the live web (no machine here reaches it), so ``agentic`` and ``overall`` are given once
    everything else was measured, with web search counted 0 as BFCL counts a category not run:
    a lower bound."""
    card = estimated_card(categories)
    measured = set(categories)
    groups = {"non_live": (card.non_live, ("simple_python", "simple_java", "simple_javascript", "multiple",
                                           "parallel", "parallel_multiple")),
              "live": (card.live, ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")),
              "irrelevance": (card.irrelevance, ("irrelevance", "live_irrelevance")),
              "multi_turn": (card.multi_turn, MULTI_TURN),
              "memory": (card.memory, MEMORY_CATEGORIES)}
    out = {name: round(score.accuracy, 4) for name, (score, parts) in groups.items() if measured >= set(parts)}
    if set(out) == set(groups):
        out["agentic"] = round(card.agentic.accuracy, 4)
        out["overall"] = round(card.overall.accuracy, 4)
    return out


def table(report: dict) -> str:
    """The card as a Markdown table: one column per mode, and FC answers right in any format
    (``bench/format_ceiling.py``) beside FC's when the report has them."""
    modes = [m for m in MODES if m in report["modes"]]
    columns = [(f"{m} accuracy", report["modes"][m]["categories"], report["modes"][m].get("summaries", {}))
               for m in modes]
    if "fc_any_format" in report and "fc" in modes:
        columns.insert(modes.index("fc") + 1, ("fc, right in any format", report["fc_any_format"]["categories"],
                                                    report["fc_any_format"].get("summaries", {})))
    rows = ["| category | entries | " + " | ".join(name for name, _, _ in columns) + " |",
            "|---|---|" + "---|" * len(columns)]
    categories = sorted({c for m in modes for c in report["modes"][m]["categories"]},
                        key=lambda c: ORDER.index(c) if c in ORDER else len(ORDER))
    for category in categories:
        cells = [figures.get(category) for _, figures, _ in columns]
        entries = next(c["entries"] for c in cells if c)
        rows.append(f"| {category} | {entries} | "
                    + " | ".join(f"{c['accuracy']:.3f} ({c['valid']})" if c else "" for c in cells) + " |")
    groups = [summaries for _, _, summaries in columns]
    for group in GROUPS:
        if any(group in g for g in groups):
            label = "web search not run, counted 0 as BFCL counts it" if group in ("agentic", "overall") else "BFCL's group"
            rows.append(f"| **{group}** ({label}) | | " + " | ".join(f"**{g[group]:.3f}**" if group in g else ""
                                                                         for g in groups) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_group(parser, MODEL, skip=["adapter", "checkpoint"],
              defaults={"model_name_or_path": str(MODELS_DIR / "qwen2.5-coder-0.5b-instruct")},
              notes={"model_name_or_path": "default here: Qwen2.5-Coder-0.5B-Instruct (`make models` fetches it)",
                     "run": "with --format_sensitivity only: its latest actor answers instead of the model"})
    add_group(parser, SAMPLE, defaults={"categories": list(SINGLE_TURN), "per_category": 100},
              notes={"categories": "default here: the single-turn ones"})
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    # Greedy, as BFCL scores a model: no temperature or seed to set.
    add_group(parser, SAMPLING, skip=["temperature", "greedy", "context_window", "seed"], defaults={"max_new_tokens": 256})
    add_group(parser, ENGINE, defaults={"n_rollout_threads": 16},
              notes={"n_rollout_threads": "entries answered together",
                     "rollout_engine": "vllm's prefix cache serves the start of a multi-turn step's chat again"})
    parser.add_argument("--format_sensitivity", type=int, default=0, metavar="K",
                        help="instead of categories: K entries of BFCL's format-sensitivity set, each under its 26 "
                             "prompt variations, in prompting mode")
    parser.add_argument("--report", default=str(ROOT / "bench/results/real_card_qwen2.5_coder_0.5b.json"))
    parser.add_argument("--answers", default=str(ROOT / "bench/results/real_card"))
    args = parser.parse_args()
    check_parsed(parser, args, MODEL, SAMPLE, SAMPLING, ENGINE)
    args.bfcl_dir = args.bfcl_dir or str(BFCL_DIR)

    report_path = Path(args.report)
    report = json.loads(report_path.read_text()) if report_path.exists() else {"modes": {}}
    report.update(model=Path(args.model_name_or_path).name, **({"run": args.run} if args.run else {}), greedy=True, max_new_tokens=args.max_new_tokens, machine=f"{platform.machine()}, {os.cpu_count()} cores",
                  sample="fcenv/bfcl_sample.py: k entries spread evenly over each category's file")
    if args.format_sensitivity:
        with tempfile.TemporaryDirectory() as tmp:
            report["format_sensitivity"] = sensitivity_card(args, Path(tmp))
        report_path.write_text(json.dumps(report, indent=2) + "\n")
        print({k: v for k, v in report["format_sensitivity"].items() if k != "by_config"})
        return
    with tempfile.TemporaryDirectory() as tmp:
        files = [write_sample(Path(args.bfcl_dir), c, args.per_category, Path(tmp)) for c in args.categories]
        for mode in args.modes:
            measured = card_mode(args, mode, files, Path(tmp))
            entry = report["modes"].setdefault(mode, {"categories": {}, "runs": []})
            entry["categories"].update(measured.pop("categories"))
            entry["runs"].append({**measured, "categories": args.categories, "per_category": args.per_category,
                                  "batch": args.n_rollout_threads})
            for figures in [*report["modes"].values(), report.get("fc_any_format", {})]:
                if figures:
                    figures["summaries"] = summaries(figures["categories"])
            report_path.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))
    for mode, figures in report["modes"].items():
        print("\n" + render(estimated_card(figures["categories"]), f"{report['model']} ({mode} mode, each category "
                                                                   "estimated from its sample)"))


if __name__ == "__main__":
    main()
