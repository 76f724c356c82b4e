"""A trained model on BFCL's multi-turn entries, played by BFCL's own inference flow.

An independent client: nothing of fcenv's env, its backends or its checkers is used. BFCL's code
plays every entry in the oracle venv (``harness.oracle.OracleSession``, the driver's ``fc_flow``
op): its generation runner's per-entry function runs the Qwen FC handler's multi-turn loop
(``inference_multi_turn_prompting``: its parsing of each answer, its chat history, its decoding,
its backends running the calls, its step limit), and its evaluation runner judges what the loop
recorded (``multi_turn_checker``, force-terminated and inference-error entries as it fails them).
Only the model call is ours: each time the loop asks for the model's next answer, this process
renders BFCL's chat and tools with the tokenizer's own chat template
(``harness.template_prompts.query_ids``) and generates greedily with vLLM's ``LLM`` on the
actor's weights (``bench.heldout.VLLMClient``: the checkpoint's LoRA adapter merged into the
saved base by PEFT, or the base alone), every entry's pending query in one batch.

BFCL keeps its chat in its handler's own message shape; the client hands it to the chat template
in the shape Hugging Face templates take (a call as ``{"type": "function", "function": {...}}``).
A prompt longer than the context window leaves room for (``--context_window`` minus
``--max_new_tokens``) is not cut: the query fails, and BFCL records the entry's inference error,
as it does when its server refuses a prompt.

Run: ``python -m bench.bfcl_flow RUN_DIR [--checkpoint iter_XXXXXX | --base] --dataset_path FILE
[--max_new_tokens 256] [--per_category K] [--out report.json] [--agree_with VERDICTS.jsonl]``.
``--dataset_path`` is a question file in BFCL's layout with its ``possible_answer/`` beside it
(``python -m bench.bfcl_sample FILE --multi_turn``); its multi-turn entries are played. The
report gives the accuracy overall and per category, the share of turns BFCL's step limit
force-terminated and of turns ended with a text reply (no call), every entry's verdict with its
turns and its recorded answers, and the wall seconds. ``--agree_with`` (``fcenv evaluate --out``
on ``fcenv generate``'s answers to the same file) counts the entries whose verdicts agree.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from fcenv.flags import DATA, ENGINE, SAMPLING, add_group, check_parsed
from fcenv.sources.resolve import resolve_dataset
from bench.heldout import VLLMClient, checkpoints
from harness.oracle import OracleSession
from harness.template_prompts import query_ids

ROOT = Path(__file__).resolve().parents[1]


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def category_of(entry_id: str) -> str:
    return entry_id.rsplit("_", 1)[0]


def multi_turn_sample(data: Path, per_category: int) -> tuple[list[dict], list[list]]:
    """The multi-turn entries of a question file (the first ``per_category`` of each category,
    0: all) and their ground truth, read from ``possible_answer/`` beside it."""
    truth = {line["id"]: line["ground_truth"] for line in read_lines(data.parent / "possible_answer" / data.name)}
    kept, seen = [], defaultdict(int)
    for entry in read_lines(data):
        category = category_of(entry["id"])
        if not category.startswith("multi_turn") or (per_category and seen[category] >= per_category):
            continue
        seen[category] += 1
        kept.append(entry)
    return kept, [truth[entry["id"]] for entry in kept]


class Responder:
    """The model's answers to a batch of BFCL's queries: rendered by the tokenizer's chat
    template, generated greedily by vLLM on the actor's weights; counts what it was asked."""

    def __init__(self, client: VLLMClient, checkpoint: Path | None, max_new_tokens: int, context_window: int):
        self.client, self.checkpoint = client, checkpoint
        self.max_new_tokens, self.context_window = max_new_tokens, context_window
        self.batches = self.queries = self.prompt_tokens = self.too_long = self.unrendered = 0

    def __call__(self, queries: list[dict]) -> list[dict]:
        limit = self.context_window - self.max_new_tokens
        answers: list[dict | None] = [None] * len(queries)
        prompts: dict[int, list[int]] = {}
        for slot, query in enumerate(queries):
            try:
                ids = query_ids(self.client.tokenizer, query)
            except Exception as exc:  # noqa: BLE001 - a chat BFCL's own prompt wrote but this template cannot
                self.unrendered += 1
                answers[slot] = {"error": f"the chat template cannot render the chat of entry {query['id']}: {exc}"}
                continue
            if len(ids) > limit:  # not cut: it fails, as BFCL's query fails when its server refuses it
                self.too_long += 1
                answers[slot] = {"error": f"context_overflow: the prompt of entry {query['id']} is {len(ids)} tokens, "
                                          f"past the {limit} the context window leaves for it"}
            else:
                prompts[slot] = ids
        if prompts:
            texts = self.client.generate(self.checkpoint, list(prompts.values()), greedy=True,
                                         max_new_tokens=self.max_new_tokens)
            for slot, text in zip(prompts, texts):
                answers[slot] = {"text": text}
        self.batches += 1
        self.queries += len(queries)
        self.prompt_tokens += sum(map(len, prompts.values()))
        print(f"bfcl_flow: batch {self.batches}: {len(queries)} queries, {self.queries} so far", file=sys.stderr,
              flush=True)
        return answers


def figures(verdicts: list[dict]) -> dict:
    """Accuracy, and per turn played: the share the step limit force-terminated, the share
    ended with a text reply, the mean steps (``bench.multi_turn_report``'s figures)."""
    turns = [turn for verdict in verdicts for turn in verdict["turns"] if turn["steps"]]
    played = max(len(turns), 1)
    return {"entries": len(verdicts), "accuracy": sum(v["valid"] for v in verdicts) / max(len(verdicts), 1),
            "turns": len(turns), "force_terminated_turns": sum(t["force_quit"] for t in turns) / played,
            "turns_ended_with_reply": sum(t["text_reply"] for t in turns) / played,
            "steps_per_turn": sum(t["steps"] for t in turns) / played,
            "inference_errors": sum(v["error_type"] == "multi_turn:inference_error" for v in verdicts)}


def agreement(verdicts: list[dict], path: Path) -> dict:
    """How many entries get the same verdict (valid or not, and the same error type) in
    ``path``, a verdicts file of ``fcenv evaluate --out``."""
    theirs = {line["id"]: line for line in read_lines(path)}
    same_valid = same_error = 0
    differ, missing = [], []
    for verdict in verdicts:
        other = theirs.get(verdict["id"])
        if other is None:
            missing.append(verdict["id"])
            continue
        same_valid += bool(other["valid"]) == verdict["valid"]
        same_error += other.get("error_type") == verdict["error_type"]
        if bool(other["valid"]) != verdict["valid"] or other.get("error_type") != verdict["error_type"]:
            differ.append({"id": verdict["id"], "ours": [verdict["valid"], verdict["error_type"]],
                           "theirs": [bool(other["valid"]), other.get("error_type")]})
    return {"file": str(path), "entries": len(verdicts) - len(missing), "same_valid": same_valid,
            "same_error_type": same_error, "differ": differ, "missing": missing}


def context_window_of(saved: dict) -> int:
    """The run's context window (what ``fcenv generate --run`` uses): as resolved, else the
    model's maximum."""
    from transformers import AutoConfig

    resolved = saved["resolved"]
    given = resolved.get("context_window") or saved.get("context_window")
    return int(given or AutoConfig.from_pretrained(resolved["base_model"]).max_position_embeddings)


def chosen_checkpoint(run_dir: Path, name: str, base: bool) -> Path | None:
    if base:
        return None
    found = checkpoints(run_dir)
    if not found:
        raise SystemExit(f"{run_dir}: no checkpoints")
    if not name:
        return found[-1]
    if not (run_dir / "checkpoints" / name).is_dir():
        raise SystemExit(f"--checkpoint {name}: not in {run_dir / 'checkpoints'} ({', '.join(p.name for p in found)})")
    return run_dir / "checkpoints" / name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--checkpoint", default="", help="the checkpoint whose actor answers (default: the last)")
    which.add_argument("--base", action="store_true", help="the base model alone (no adapter)")
    add_group(parser, DATA, notes={"dataset_path": "required; its multi-turn entries are played, their answers "
                                                   "read from possible_answer/ beside the question file"})
    parser.add_argument("--per_category", type=int, default=0, help="the first K entries of each category (0: all)")
    # Greedy, as BFCL's runner asks: no temperature or seed to set.
    add_group(parser, SAMPLING, skip=["temperature", "greedy", "seed"], defaults={"max_new_tokens": 256},
              notes={"context_window": "0 here: the run's (its model's maximum)"})
    parser.add_argument("--concurrency", type=int, default=64, help="entries played at once (one batch)")
    add_group(parser, ENGINE, skip=["rollout_engine", "n_rollout_threads"],
              notes={"kv_cache_mib": "a batch's prompts stay cached from one step to the next while they fit"})
    parser.add_argument("--prefill_chunk", type=int, default=2048,
                        help="prompt tokens vLLM prefills in one step (0: vLLM's own): its working memory grows with "
                             "it (on a CPU, a whole 7,000-token BFCL prompt at once took about 2 GB more)")
    parser.add_argument("--vllm_python", default=str(ROOT / ".vllm-venv" / "bin" / "python"))
    parser.add_argument("--oracle_python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--agree_with", type=Path, default=None,
                        help="verdicts of fcenv evaluate --out: print how many entries get the same verdict")
    args = parser.parse_args(argv)
    if not args.dataset_path:
        parser.error("--dataset_path is required")
    check_parsed(parser, args, SAMPLING, ENGINE)
    for flag, python, make in (("--vllm_python", args.vllm_python, "make vllm"),
                               ("--oracle_python", args.oracle_python, "make oracle")):
        if not Path(python).is_file():
            print(f"{flag} {python}: no such interpreter (`{make}` builds it)", file=sys.stderr)
            return 2
    saved = json.loads((args.run_dir / "args.json").read_text())
    checkpoint = chosen_checkpoint(args.run_dir, args.checkpoint, args.base)
    context_window = args.context_window or context_window_of(saved)
    data = resolve_dataset(args.dataset_path)
    entries, truth = multi_turn_sample(data, args.per_category)
    if not entries:
        print(f"--dataset_path {args.dataset_path}: no multi-turn entries", file=sys.stderr)
        return 2
    started = time.perf_counter()
    client = VLLMClient(args.run_dir, args.vllm_python, seed=0, context_window=context_window,
                        kv_cache_bytes=args.kv_cache_mib << 20, prefill_chunk=args.prefill_chunk)
    respond = Responder(client, checkpoint, args.max_new_tokens, context_window)
    try:
        with OracleSession(args.oracle_python) as session:
            verdicts = session.play_fc(entries, truth, respond, family="hermes", concurrency=args.concurrency)
    finally:
        client.close()
    by_category: dict[str, list[dict]] = defaultdict(list)
    for verdict in verdicts:
        verdict["category"] = category_of(verdict["id"])
        by_category[verdict["category"]].append(verdict)
    report = {"run": str(args.run_dir), "checkpoint": "base" if checkpoint is None else checkpoint.name,
              "data": str(data), "max_new_tokens": args.max_new_tokens, "context_window": context_window,
              **figures(verdicts), "categories": {name: figures(group) for name, group in sorted(by_category.items())},
              "batches": respond.batches, "queries": respond.queries, "prompt_tokens": respond.prompt_tokens,
              "prompts_past_the_window": respond.too_long,
              "prompts_the_template_cannot_render": respond.unrendered, "seconds": round(time.perf_counter() - started, 1),
              "verdicts": verdicts}
    print(f"{report['checkpoint']}: accuracy {report['accuracy']:.3f} on {len(verdicts)} multi-turn entries, "
          f"force-terminated turns {report['force_terminated_turns']:.3f}, turns ended with a text reply "
          f"{report['turns_ended_with_reply']:.3f}, {report['queries']} queries in {report['batches']} batches, "
          f"{report['seconds']} s")
    for name, row in report["categories"].items():
        print(f"  {name:<24} {row['accuracy']:.3f}  ({row['entries']} entries, force-terminated turns "
              f"{row['force_terminated_turns']:.3f}, ended with a reply {row['turns_ended_with_reply']:.3f})")
    if args.agree_with:
        report["agreement"] = agreed = agreement(verdicts, args.agree_with)
        print(f"agreement with {args.agree_with}: {agreed['same_valid']} of {agreed['entries']} entries get the same "
              f"verdict, {agreed['same_error_type']} the same error type"
              + (f"; {len(agreed['missing'])} entries not in it" if agreed["missing"] else ""))
        for row in agreed["differ"]:
            print(f"  {row['id']}: ours {row['ours']}, theirs {row['theirs']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
