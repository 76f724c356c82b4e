"""Drives fcenv.verl inside verl's own venv (.verl-venv; verl pins an older transformers) and
prints one JSON report; tests/doors/test_verl.py runs it in a subprocess and checks the report.

What runs here is what verl runs on the CPU side of a training step: the recipe
(examples/verl/fcenv_grpo.yaml) composed with verl's defaults by hydra, the agent-loop file and
a tool config loaded by verl's own loaders, the agent loop instantiated as verl's AgentLoopWorker
instantiates it and run on real fcenv episodes, and the tool's create/execute/calc_reward/release.
The inference server is a transformers model (the tests' tiny model) on the CPU, answering
verl's ``generate`` as vLLM's server does (token ids in, token ids and log-probs out); a second
server replays a trajectory's texts, as a model that wrote them would.

Run: ``.verl-venv/bin/python tests/support/verl_driver.py --model TINY_MODEL_DIR --bfcl-dir BFCL_DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import yaml  # noqa: E402


class TransformersServer:
    """verl's ``generate`` over a transformers model: samples up to ``max_tokens`` new tokens
    (stopping at the end-of-turn token) and returns them with their sampling log-probs."""

    def __init__(self, model, tokenizer):
        self.model, self.tokenizer = model, tokenizer

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        ids = torch.tensor([list(prompt_ids)])
        temperature = float(sampling_params.get("temperature", 1.0))
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                      temperature=temperature, top_k=0, top_p=1.0,
                                      max_new_tokens=int(sampling_params["max_tokens"]),
                                      eos_token_id=self.tokenizer.eos_token_id, pad_token_id=self.tokenizer.pad_token_id,
                                      output_scores=True, return_dict_in_generate=True)
        new = out.sequences[0, ids.shape[1]:].tolist()
        logprobs = [torch.log_softmax(s[0].float(), -1)[t].item() for s, t in zip(out.scores, new)]
        if self.tokenizer.eos_token_id in new:
            end = new.index(self.tokenizer.eos_token_id) + 1
            new, logprobs = new[:end], logprobs[:end]
        return TokenOutput(token_ids=new, log_probs=logprobs, stop_reason="completed")


class ReplayServer:
    """A model that answers with the given texts, one per step (then nothing)."""

    def __init__(self, tokenizer, texts):
        self.tokenizer, self.texts = tokenizer, list(texts)

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        text = self.texts.pop(0) if self.texts else ""
        ids = self.tokenizer(text, add_special_tokens=False).input_ids + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids[: int(sampling_params["max_tokens"])], stop_reason="completed")


def compose_recipe():
    """The recipe composed with verl's defaults, as ``python -m verl.trainer.main_ppo
    --config-path examples/verl --config-name fcenv_grpo`` composes it."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "examples" / "verl"), version_base=None):
        return compose(config_name="fcenv_grpo", overrides=["actor_rollout_ref.rollout.response_length=400"])


def make_loop(config, server, tokenizer, name):
    """The agent loop, instantiated from the agent-loop file as verl's AgentLoopWorker does."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    path = ROOT / config.actor_rollout_ref.rollout.agent.agent_loop_config_path
    entries = {entry.name: entry for entry in OmegaConf.load(path)}
    return hydra.utils.instantiate(config=entries[name], trainer_config=DictConfigWrap(config=config),
                                   server_manager=server, tokenizer=tokenizer, processor=None, hf_model_type="llama",
                                   dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
                                   tools=ToolListWrap([]))


def ground_truth_texts(task) -> list[str]:
    """One step per turn with all its calls, then an answer without calls that ends the turn."""
    texts = []
    for calls in task.ground_truth:
        if calls:
            texts.append("[" + ", ".join(calls) + "]")
        texts.append("Done.")
    return texts


async def agent_loop_report(config, model, tokenizer) -> dict:
    from fcenv.bundled import resolve
    from fcenv.data import load_tasks
    from fcenv.verl import dataset_rows

    tasks = load_tasks(resolve("multi_turn_train"))
    two_turns = [i for i, t in enumerate(tasks) if len(t.ground_truth) == 2][:3]
    rows = dataset_rows("multi_turn_train", indices=two_turns)  # the prompt agent_loops.yaml plays
    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1}
    report = {"rows": rows, "sampled": [], "replayed": []}
    server = TransformersServer(model, tokenizer)
    torch.manual_seed(0)
    for row in rows:
        loop = make_loop(config, server, tokenizer, "fcenv_agent")
        out = await loop.run(params, raw_prompt=row["prompt"], extra_info=row["extra_info"])
        ids = torch.tensor([out.prompt_ids + out.response_ids])
        with torch.no_grad():
            scores = torch.log_softmax(model(ids).logits[0, len(out.prompt_ids) - 1:-1].float(), dim=-1)
        own = scores.gather(1, torch.tensor(out.response_ids)[:, None]).squeeze(1).tolist()
        gap = max((abs(a - b) for a, b, m in zip(own, out.response_logprobs, out.response_mask) if m), default=0.0)
        report["sampled"].append({"mask": out.response_mask, "reward": out.reward_score, "logprob_gap": gap,
                                  "env_text": tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask)
                                                                if not m]),
                                  "extra": out.extra_fields, "response_length": len(out.response_ids)})
    for index, wrong in ((two_turns[0], False), (two_turns[0], True)):
        texts = ground_truth_texts(tasks[index])
        if wrong:
            texts[0] = texts[0].replace("(", "(x=1, ", 1)
        loop = make_loop(config, ReplayServer(tokenizer, texts), tokenizer, "fcenv_agent")
        row = rows[0]
        out = await loop.run(params, raw_prompt=row["prompt"], extra_info=row["extra_info"])
        report["replayed"].append({"wrong": wrong, "reward": out.reward_score, "valid": out.extra_fields["fcenv_valid"],
                                   "mask_ones": sum(out.response_mask),
                                   "answer_tokens": sum(len(tokenizer(t, add_special_tokens=False).input_ids) + 1
                                                        for t in texts)})
    return report


async def tool_report(bfcl_dir: Path) -> dict:
    from verl.tools.tool_registry import initialize_tools_from_config

    from fcenv.data import load_tasks
    from fcenv.multi_turn.executor import parse_call_text
    from fcenv.verl import tool_schemas

    report = {}
    for label, data, options in (("tiny", "multi_turn_train", {"reward": "shaped"}),
                                 ("tiny_fc", "multi_turn_train", {"reward": "bfcl", "tool_format": "hermes"}),
                                 ("bfcl", str(bfcl_dir / "BFCL_v4_multi_turn_base.json"), {"reward": "shaped"})):
        schemas = tool_schemas(data)
        config = {"tools": [{"class_name": "fcenv.verl.FunctionCallingTool",
                             "config": {"type": "native", "dataset_path": data, **options}, "tool_schema": schema}
                            for schema in schemas]}
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
            yaml.safe_dump(config, handle)
        tools = {tool.name: tool for tool in initialize_tools_from_config(handle.name)}
        from fcenv.bundled import resolve

        tasks = load_tasks(resolve(data) if label != "bfcl" else Path(data))
        task = next(t for t in tasks if len(t.ground_truth) == 1) if label != "bfcl" else tasks[0]
        outcomes = {}
        for case in ("truth", "wrong"):
            first = parse_call_text(task.ground_truth[0][0])[0]
            instance, _ = await tools[first].create(create_kwargs={"task_id": task.id})
            responses = []
            for call in task.ground_truth[0]:
                name, _, kwargs = parse_call_text(call)
                if case == "wrong":
                    kwargs = {k: (v + 1 if isinstance(v, (int, float)) else v + "x") for k, v in kwargs.items()}
                response, step_reward, metrics = await tools[name].execute(instance, kwargs)
                responses.append(response.text)
            reward = await tools[first].calc_reward(instance)
            await tools[first].release(instance)
            outcomes[case] = {"responses": responses, "reward": reward, "turns": len(task.ground_truth)}
        report[label] = {"tools": sorted(tools), "functions": sorted({f["name"] for t in tasks for f in t.functions}),
                         **outcomes}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--model", required=True)
    parser.add_argument("--bfcl-dir", required=True, type=Path)
    args = parser.parse_args()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    config = compose_recipe()
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    report = {
        "recipe": {"adv_estimator": config.algorithm.adv_estimator,
                   "default_agent_loop": config.actor_rollout_ref.rollout.agent.default_agent_loop,
                   "multi_turn": bool(config.actor_rollout_ref.rollout.multi_turn.enable)},
        "agent_loop": asyncio.run(agent_loop_report(config, model, tokenizer)),
        "tool": asyncio.run(tool_report(args.bfcl_dir)),
    }
    print(json.dumps(report, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
