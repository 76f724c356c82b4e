"""Held-out BFCL accuracy of a trained run, measured by an independent client.

Nothing of the trainer is used: the base model and tokenizer load with ``transformers``'
``Auto*`` classes from the folder the run saved (``<run>/base``), the actor adapter of a
checkpoint loads with ``peft.PeftModel.from_pretrained``, answers come from plain
``generate`` on the tokenizer's own chat template over the env's messages, and the verdicts
from the env. Multi-turn entries are played step by step through ``env.step`` until the
episode ends. Both the checkpoint of the run's start (``iter_000000``) and its last one are
measured, greedy and sampled (at the run's training temperature, 1 unless it set another; no
top-k or top-p: the distribution the run trained), so "start -> end" is the
change RL made; ``--base`` measures the base model alone first (the change a warm-up and RL
made together). Every figure is given overall and per BFCL category; in FC mode with its
ceiling beside it (``any_format_accuracy``: the share of single-step answers that pass once
their JSON calls, a ```` ```json ```` block included, are written in the family's format). The entries are played
in lockstep, ``LOCKSTEP`` at a time; ``generate`` answers them in batches of prompts of similar
length, padded on the left.

``--rollout_engine vllm`` takes the answers from vLLM's own API instead of ``generate``
(``bench/heldout_vllm.py``, run with ``.vllm-venv``'s interpreter: ``LLM`` on the actor's
weights, the checkpoint's adapter merged into the saved base by PEFT), on the same prompts (the
tokenizer's chat template) and decoded the same way; the entries are played in lockstep, one
batch per step. In float32 its greedy answers are ``generate``'s; sampled ones draw other
random numbers.

``--prompt_variations`` asks every entry under each of BFCL's 26 prompt variations instead
(prompting mode, the format-sensitivity configurations: each writes the system prompt, and the
answers are read in its format), and gives their spread as BFCL scores its format-sensitivity
set: the largest difference between two configurations' accuracies and their standard
deviation, in points (``python -m bench.bfcl_sample FILE --sensitivity K`` writes the entries of
the set's sample).

Run: ``python -m bench.heldout RUN_DIR [--dataset_path EVAL_FILE] [--samples 4] [--rollout_engine hf|vllm] [--prompt_variations]
[--out report.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import torch

import fcenv  # registers the env id
from fcenv.chat_mode import ChatMode
from fcenv.flags import DATA, ENGINE, SAMPLING, add_group, check_parsed, dataset_problems
from fcenv.prompt_variations import format_sensitivity_configs, reaches
from harness.any_format import any_format_verdicts
from harness.template_prompts import prompt_ids

ROOT = Path(__file__).resolve().parents[1]
VLLM_CLIENT = Path(__file__).resolve().with_name("heldout_vllm.py")
LOCKSTEP = 64  # episodes played together
HF_BATCH = 8  # prompts in one generate call (--rollout_engine hf)


def checkpoints(run_dir: Path) -> list[Path]:
    return sorted(p for p in (run_dir / "checkpoints").glob("iter_*") if p.is_dir())


def load_actor(run_dir: Path, checkpoint: Path | None):
    """The saved base with the checkpoint's actor adapter (the base alone for ``None``)."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_dir = Path(json.loads((run_dir / "args.json").read_text())["resolved"]["base_model"])
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    if checkpoint is not None:
        model = PeftModel.from_pretrained(model, checkpoint / "actor")
    return tokenizer, model.eval()


def sampling_options(greedy: bool, temperature: float) -> dict:
    """``generate``'s decoding options: greedy, or the full distribution at ``temperature`` (no
    top-k or top-p: the distribution a run trained)."""
    return {"do_sample": False} if greedy else {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}


@torch.no_grad()
def answer(model, tokenizer, messages: list[dict], *, greedy: bool, max_new_tokens: int,
           context_window: int, tools: list[dict] | None = None) -> str:
    ids = prompt_ids(tokenizer, messages, tools, max_new_tokens=max_new_tokens, context_window=context_window)
    prompt = torch.tensor([ids])
    options = sampling_options(greedy, temperature=1.0)
    out = model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=max_new_tokens,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, **options)
    return tokenizer.decode(out[0, prompt.shape[1]:], skip_special_tokens=True)


def hf_responder(model, tokenizer, greedy: bool, args):
    """The model's answers to a batch of episodes (their latest infos), from ``generate`` in
    batches of ``HF_BATCH`` prompts of similar length (padded on the left)."""
    def respond(infos: list[dict]) -> list[str]:
        prompts = [prompt_ids(tokenizer, info["messages"], info.get("tools"), max_new_tokens=args.max_new_tokens,
                              context_window=args.context_window) for info in infos]
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        texts: dict[int, str] = {}
        for start in range(0, len(order), HF_BATCH):
            chunk = order[start:start + HF_BATCH]
            width = max(len(prompts[i]) for i in chunk)
            ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(prompts[i])) + prompts[i] for i in chunk])
            mask = torch.tensor([[0] * (width - len(prompts[i])) + [1] * len(prompts[i]) for i in chunk])
            options = sampling_options(greedy, args.temperature)
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=args.max_new_tokens,
                                     pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, **options)
            for row, i in enumerate(chunk):
                texts[i] = tokenizer.decode(out[row, width:], skip_special_tokens=True)
        return [texts[i] for i in range(len(prompts))]

    return respond


class VLLMClient:
    """vLLM's ``LLM`` in a process of its own (``bench/heldout_vllm.py``) on the actor's
    weights: the saved base with the checkpoint's adapter merged by PEFT
    (``PeftModel.from_pretrained(...).merge_and_unload()``, saved to a temporary folder), or
    the base alone. The process starts again when the checkpoint asked for changes.

    Merged weights, not vLLM's ``LoRARequest``: on a CPU vLLM applies an adapter with plain
    torch ops that gather the low-rank weights token by token, which took 82% of the time of
    answering BFCL's long prompts here (an answer 2.4 times dearer than the base's on short
    prompts, far more on long ones)."""

    def __init__(self, run_dir: Path, python: str, seed: int, context_window: int, kv_cache_bytes: int = 1 << 30,
                 prefill_chunk: int = 0):
        from transformers import AutoTokenizer

        self.run_dir = run_dir
        self.base = json.loads((run_dir / "args.json").read_text())["resolved"]["base_model"]
        self.tokenizer = AutoTokenizer.from_pretrained(self.base)
        self.python, self.seed, self.context_window = python, seed, context_window
        self.kv_cache_bytes, self.prefill_chunk = kv_cache_bytes, prefill_chunk  # 0: vLLM's own chunk
        self.process: subprocess.Popen | None = None
        self.checkpoint: Path | None = None
        self.merged = tempfile.TemporaryDirectory(prefix="heldout-merged-")

    def _serve(self, checkpoint: Path | None) -> None:
        """Start vLLM on the actor of ``checkpoint`` (None: the base), unless it already serves it."""
        if self.process is not None and checkpoint == self.checkpoint:
            return
        self._stop()
        model = self.base if checkpoint is None else self._merge(checkpoint)
        settings = {"model": str(model), "max_model_len": self.context_window, "seed": self.seed,
                    "stop_ids": [self.tokenizer.eos_token_id], "kv_cache_bytes": self.kv_cache_bytes,
                    "prefill_chunk": self.prefill_chunk}
        # vLLM in this one process, eager, on as many threads as the hf client, from local files only.
        env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "HF_HUB_OFFLINE": "1", "TORCHDYNAMO_DISABLE": "1",
               "OMP_NUM_THREADS": str(torch.get_num_threads())}
        env.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        self.process = subprocess.Popen([self.python, str(VLLM_CLIENT), json.dumps(settings)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.checkpoint = checkpoint

    def _merge(self, checkpoint: Path) -> Path:
        """The actor of ``checkpoint`` as ``load_actor`` loads it, its adapter merged into the
        base's weights by PEFT, saved in float32."""
        folder = Path(self.merged.name) / "actor"
        shutil.rmtree(folder, ignore_errors=True)
        tokenizer, model = load_actor(self.run_dir, checkpoint)
        model.merge_and_unload().save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        return folder

    def generate(self, checkpoint: Path | None, prompts: list[list[int]], *, greedy: bool, max_new_tokens: int,
                 temperature: float = 1.0) -> list[str]:
        self._serve(checkpoint)
        request = {"prompts": prompts, "greedy": greedy, "temperature": temperature, "max_new_tokens": max_new_tokens}
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except BrokenPipeError:  # it died before reading the request (vLLM refused its settings)
            line = ""
        if not line:
            raise RuntimeError(f"the vLLM client ({VLLM_CLIENT.name}) exited with status {self.process.wait()} "
                               "(its error is printed above)")
        return [self.tokenizer.decode(tokens, skip_special_tokens=True) for tokens in json.loads(line)["tokens"]]

    def _stop(self) -> None:
        if self.process is not None:
            try:
                self.process.stdin.close()
            except BrokenPipeError:  # it has exited already
                pass
            self.process.wait()
            self.process = None

    def close(self) -> None:
        self._stop()
        self.merged.cleanup()


def play_lockstep(make_env, jobs: list[tuple[str | None, int]], respond) -> list[tuple[bool, float, str | None]]:
    """One episode per job, a (prompt variation or None, task index) pair, on envs
    ``make_env()`` makes (reused between episodes), up to ``LOCKSTEP`` at once: each step
    asks ``respond`` for every live episode's next answer in one batch. Per job, in order:
    (BFCL verdict, summed reward, the answer if the episode took one step, else None)."""
    idle = []  # envs between episodes
    pending = list(enumerate(jobs))[::-1]
    live: dict[int, tuple[object, dict, float, int]] = {}  # job number -> (env, info, reward so far, steps)
    results: dict[int, tuple[bool, float, str | None]] = {}
    while pending or live:
        while pending and len(live) < LOCKSTEP:
            number, (variation, index) = pending.pop()
            env = idle.pop() if idle else make_env()
            options = {"index": index, **({"prompt_variation": variation} if variation else {})}
            live[number] = (env, env.reset(options=options)[1], 0.0, 0)
        numbers = sorted(live)
        texts = respond([live[number][1] for number in numbers])
        for number, text in zip(numbers, texts):
            env, _, total, steps = live[number]
            _, reward, terminated, truncated, info = env.step(text)
            if terminated or truncated:
                results[number] = (bool(info["valid"]), total + reward, text if steps == 0 else None)
                idle.append(live.pop(number)[0])
            else:
                live[number] = (env, info, total + reward, steps + 1)
    return [results[number] for number in range(len(jobs))]


def vllm_responder(client: VLLMClient, checkpoint: Path, greedy: bool, args):
    """The checkpoint's actor's answers to a batch of episodes (their latest infos), from vLLM."""
    def respond(infos: list[dict]) -> list[str]:
        prompts = [prompt_ids(client.tokenizer, info["messages"], info.get("tools"), max_new_tokens=args.max_new_tokens,
                              context_window=args.context_window) for info in infos]
        return client.generate(checkpoint, prompts, greedy=greedy, max_new_tokens=args.max_new_tokens,
                               temperature=args.temperature)

    return respond


def measure(run_dir: Path, checkpoint: Path | None, data: Path, indices: list[int], args, system_prompt: str,
            reward: str, tool_format: str | None = None, client: VLLMClient | None = None,
            variations: list[str] | None = None) -> dict:
    """Greedy and sampled accuracy and reward of a checkpoint's actor (the base alone for
    ``None``), overall and per BFCL category. With ``variations`` (BFCL's prompt variations,
    prompting mode), every entry is asked under each, all in one lockstep, and each
    configuration's accuracy and their spread are given too."""
    from fcenv.format_sensitivity import sensitivity

    # FC mode: the env only judges; the tools reach the model through the tokenizer's own template.
    chat_mode = ChatMode.from_flags(tool_format, system_prompt, fc_renderer=lambda messages, tools: "")
    if variations:  # prompting mode with a prompt variation; each episode's is a reset option
        chat_mode = chat_mode.varied(variations[0])

    def make_env():
        return gym.make(fcenv.ENV_ID, dataset_path=str(data), reward=reward, **chat_mode.env_options())

    tasks = make_env().unwrapped.tasks
    categories, ids = [task.category for task in tasks], [task.id for task in tasks]
    if client is None:
        tokenizer, model = load_actor(run_dir, checkpoint)
    torch.manual_seed(args.seed)  # after loading: PEFT draws a fresh adapter's weights before reading the saved ones
    report = {"checkpoint": "base" if checkpoint is None else checkpoint.name, "tasks": len(indices),
              "temperature": args.temperature}
    for mode, greedy, repeats in (("greedy", True, 1), ("sampled", False, args.samples)):
        if repeats == 0:  # --samples 0: greedy only
            continue
        respond = hf_responder(model, tokenizer, greedy, args) if client is None else \
            vllm_responder(client, checkpoint, greedy, args)
        jobs = [(variation, index) for variation in variations or [None] for index in indices for _ in range(repeats)]
        outcomes = play_lockstep(make_env, jobs, respond)
        answers = [text for _, _, text in outcomes]
        ceiling = any_format_verdicts(make_env, tool_format, [index for _, index in jobs], answers) \
            if tool_format else [None] * len(jobs)
        if args.answers:  # one line per answer: what it was judged on, for reading or comparing clients
            with args.answers.open("a", encoding="utf-8") as out:
                for (variation, index), (ok, _, text), any_ok in zip(jobs, outcomes, ceiling):
                    out.write(json.dumps({"checkpoint": report["checkpoint"], "mode": mode, "id": ids[index],
                                          **({"prompt_variation": variation} if variation else {}),
                                          "valid": ok, "any_format_valid": any_ok, "answer": text}) + "\n")
        report[f"{mode}_accuracy"] = sum(ok for ok, _, _ in outcomes) / len(jobs)
        report[f"{mode}_reward"] = sum(total for _, total, _ in outcomes) / len(jobs)
        per_category: dict[str, list[tuple[bool, bool | None]]] = {}
        for (_, index), (ok, _, _), any_ok in zip(jobs, outcomes, ceiling):
            per_category.setdefault(categories[index], []).append((ok, any_ok))
        report[f"{mode}_categories"] = {name: _figures(pairs) for name, pairs in sorted(per_category.items())}
        single = [any_ok for any_ok in ceiling if any_ok is not None]
        if single:
            report[f"{mode}_any_format_accuracy"] = sum(single) / len(single)
        if variations:  # the spread across configurations, as BFCL scores its format-sensitivity set
            figures = sensitivity((variation, ok) for (variation, _), (ok, _, _) in zip(jobs, outcomes))
            report[f"{mode}_max_delta"], report[f"{mode}_std"] = figures.max_delta, figures.std
            report[f"{mode}_by_config"] = {config: list(counts) for config, counts in figures.by_config.items()}
    return report


def unvaried_entry(data: Path, indices: list[int]):
    """The first of the tasks that a prompt variation leaves as they are (the env varies
    single-turn Python entries only: ``fcenv.prompt_variations.reaches``), or None."""
    tasks = gym.make(fcenv.ENV_ID, dataset_path=str(data)).unwrapped.tasks
    return next((tasks[i] for i in indices if not reaches(tasks[i])), None)


def _figures(pairs: list[tuple[bool, bool | None]]) -> dict:
    """A category's accuracy, its size, and (single-step entries) its any-format ceiling."""
    figures = {"accuracy": sum(ok for ok, _ in pairs) / len(pairs), "samples": len(pairs)}
    single = [any_ok for _, any_ok in pairs if any_ok is not None]
    if single:
        figures["any_format_accuracy"] = sum(single) / len(single)
    return figures


def _max_positions(resolved: dict) -> int:
    from transformers import AutoConfig

    return int(AutoConfig.from_pretrained(resolved["base_model"]).max_position_embeddings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    add_group(parser, DATA, notes={"dataset_path": "all of its tasks (default: the run's held-out tasks)"})
    parser.add_argument("--samples", type=int, default=4, help="sampled answers per task (0: greedy only)")
    parser.add_argument("--limit", type=int, default=0, help="first N tasks only (0: all)")
    # The run's own temperature, --max_new_tokens and context window: the client measures the run as trained.
    add_group(parser, SAMPLING, skip=["temperature", "greedy", "max_new_tokens", "context_window"], defaults={"seed": 0})
    add_group(parser, ENGINE, skip=["n_rollout_threads"],
              notes={"rollout_engine": "here: transformers' generate (hf), or vLLM's LLM on the actor's merged "
                                       "weights (vllm); none of the trainer's engines"})
    parser.add_argument("--vllm_python", default=str(ROOT / ".vllm-venv" / "bin" / "python"),
                        help="with --rollout_engine vllm: the interpreter that has vLLM (`make vllm` builds .vllm-venv)")
    parser.add_argument("--base", action="store_true",
                        help="also measure the base model alone (no adapter), before the run's checkpoints")
    parser.add_argument("--checkpoints", choices=["first_last", "first", "last"], default="first_last",
                        help="which of the run's checkpoints to measure")
    parser.add_argument("--torch_threads", type=int, default=0,
                        help="CPU threads of the client and of vLLM's (0: torch's default, the machine's cores)")
    parser.add_argument("--prompt_variations", action="store_true",
                        help="prompting mode: measure each of BFCL's 26 prompt variations (the format-sensitivity "
                             "configurations) on --dataset_path's entries, and their spread (max delta, standard deviation)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--answers", type=Path, default=None,
                        help="also write every answer (checkpoint, mode, id, verdicts, text; the first step's "
                             "text of a multi-step episode is not kept) to this JSON Lines file")
    args = parser.parse_args(argv)
    if args.rollout_engine not in ("hf", "vllm"):
        parser.error(f"--rollout_engine {args.rollout_engine}: hf or vllm")
    check_parsed(parser, args, ENGINE)
    # Not flags.check: its data check would read --answers, this client's output, as possible answers.
    if args.dataset_path and (problems := dataset_problems("--dataset_path", [args.dataset_path])):
        parser.error("; ".join(problems))
    saved = json.loads((args.run_dir / "args.json").read_text())
    resolved = saved["resolved"]
    data = Path(args.dataset_path or resolved["eval_path"])
    if args.dataset_path:
        indices = list(range(len(gym.make(fcenv.ENV_ID, dataset_path=str(data)).unwrapped.tasks)))
    else:
        indices = resolved["eval_indices"]
    if args.limit > 0:
        indices = indices[: args.limit]
    if args.prompt_variations and (unvaried := unvaried_entry(data, indices)):
        print(f"--prompt_variations: {data}: entry {unvaried.id} ({unvaried.category}) is not varied: BFCL varies the "
              "prompt of single-turn Python entries only, so it would be asked under BFCL's default prompt in every "
              "configuration; give --dataset_path the single-turn Python entries alone", file=sys.stderr)
        return 2
    args.max_new_tokens = int(saved["max_new_tokens"])
    args.temperature = float(saved.get("temperature", 1.0))
    # What --context_window resolved to (0 meant the model's maximum).
    args.context_window = int(resolved.get("context_window") or saved["context_window"] or _max_positions(resolved))
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    if args.answers:
        args.answers.parent.mkdir(parents=True, exist_ok=True)
        args.answers.write_text("")
    found = checkpoints(args.run_dir)
    if not found:
        print(f"{args.run_dir}: no checkpoints", file=sys.stderr)
        return 2
    if args.rollout_engine == "vllm" and not Path(args.vllm_python).is_file():
        print(f"--vllm_python {args.vllm_python}: no such interpreter (`make vllm` builds .vllm-venv)", file=sys.stderr)
        return 2
    chosen = list(dict.fromkeys({"first_last": [found[0], found[-1]], "first": [found[0]],
                                 "last": [found[-1]]}[args.checkpoints]))
    client = (VLLMClient(args.run_dir, args.vllm_python, args.seed, args.context_window,
                         kv_cache_bytes=args.kv_cache_mib << 20)
              if args.rollout_engine == "vllm" else None)
    reports = []
    try:
        for checkpoint in ([None] if args.base else []) + chosen:
            started = time.perf_counter()
            if args.prompt_variations:
                report = measure(args.run_dir, checkpoint, data, indices, args, "", saved["reward"], client=client,
                                 variations=format_sensitivity_configs())
            else:
                report = measure(args.run_dir, checkpoint, data, indices, args, resolved["system_prompt"],
                                 saved["reward"], resolved.get("tool_format"), client)
            report["seconds"] = round(time.perf_counter() - started, 1)
            reports.append(report)
            print(json.dumps(report), flush=True)
    finally:
        if client is not None:
            client.close()
    start, end = reports[0], reports[-1]
    for mode in ("greedy", "sampled") if args.samples else ("greedy",):
        print(f"held-out {mode} accuracy {start[f'{mode}_accuracy']:.3f} -> {end[f'{mode}_accuracy']:.3f}")
        if args.prompt_variations:
            print(f"  max delta {start[f'{mode}_max_delta']} -> {end[f'{mode}_max_delta']} points, standard deviation "
                  f"{start[f'{mode}_std']} -> {end[f'{mode}_std']} points, across BFCL's 26 prompt variations")
            continue
        for name, figures in end[f"{mode}_categories"].items():
            ceiling = f"  (any format {figures['any_format_accuracy']:.3f})" if "any_format_accuracy" in figures else ""
            print(f"  {name:<24} {start[f'{mode}_categories'][name]['accuracy']:.3f} -> {figures['accuracy']:.3f}"
                  f"{ceiling}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"run": str(args.run_dir), "data": str(data), "engine": args.rollout_engine,
                                        "reports": reports}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
