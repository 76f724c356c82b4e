"""fcenv's tasks and verdicts inside TRL's trainers (GRPOTrainer, RLOOTrainer, ...).

    from fcenv.trl import VerdictReward, prompt_dataset

    dataset = prompt_dataset("tiny_train")
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, train_dataset=dataset,
                          reward_funcs=[VerdictReward("tiny_train", reward="shaped")],
                          args=GRPOConfig(...))

Each row's ``prompt`` is the chat the env starts the task with (the system prompt with the
function docs, then the user's question), which TRL renders with the model's chat template;
``task_index`` goes with it to the reward function. ``VerdictReward`` steps an env on the row's
task with each completion's text: the reward is fcenv's (``"bfcl"``: 1 for BFCL's valid
verdict, else 0; ``"shaped"``: the facet-shaped reward, which pays a failing answer less than a
valid one), and every verdict is kept (``verdicts``) for logging. In FC mode (native tool
calling, ``tool_format="hermes"`` etc.) the prompts are rendered with each task's tools and
the completions judged in the family's format. Multi-turn tasks are not
served here: they need tool results between samples, which fcenv's own trainer handles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fcenv.env import FunctionCallingEnv


def _single_turn_indices(env: FunctionCallingEnv, path: str | Path, indices: Sequence[int] | None) -> list[int]:
    tasks = env.tasks
    chosen = list(range(len(tasks))) if indices is None else [int(i) for i in indices]
    multi = [tasks[i].id for i in chosen if tasks[i].is_multi_turn]
    if multi:
        raise ValueError(f"{path}: {len(multi)} multi-turn entries (first: {multi[0]}); TRL's trainers sample one "
                         f"completion per prompt, so train multi-turn tasks with train_fctncalling.py")
    return chosen


def prompt_dataset(dataset_path: str | Path, *, system_prompt: str | None = None,
                   indices: Sequence[int] | None = None, tool_format: str | None = None, renderer: Any = None):
    """A ``datasets.Dataset`` with ``prompt``, ``task_index`` and ``task_id`` per single-turn
    task of a BFCL question file (or the chosen ``indices``).

    ``prompt`` is the chat (messages), which TRL renders with the model's template. In FC mode
    (``tool_format``) each task has its own tools, while TRL's trainers take one tool list for
    all prompts, so ``prompt`` is the text already rendered with the task's tools by
    ``renderer`` (the model's tokenizer, as the env takes it), and ``tools`` holds them as JSON.
    """
    import json

    from datasets import Dataset

    if tool_format is None:
        env = FunctionCallingEnv(dataset_path=str(dataset_path), system_prompt=system_prompt)
    else:
        env = FunctionCallingEnv(dataset_path=str(dataset_path), tool_format=tool_format, renderer=renderer)
    rows = []
    for index in _single_turn_indices(env, dataset_path, indices):
        observation, info = env.reset(options={"index": index})
        row = {"prompt": info["messages"], "task_index": index, "task_id": info["id"]}
        if tool_format is not None:
            row.update(prompt=observation, tools=json.dumps(info["tools"]))
        rows.append(row)
    return Dataset.from_list(rows)


def _text(completion: Any) -> str:
    """A completion as TRL passes it: text, or (conversational) a list of messages."""
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content") or "" for m in completion if m.get("role") == "assistant")


class VerdictReward:
    """A TRL reward function: fcenv's reward for each completion on its row's task."""

    def __init__(self, dataset_path: str | Path, *, reward: str | Callable = "bfcl", system_prompt: str | None = None,
                 handler: str | None = None, checker: str | Callable | None = None, tool_format: str | None = None):
        # The answer is judged, not rendered: FC mode needs no template here.
        rendering = {"tool_format": tool_format, "renderer": lambda messages, tools: ""} if tool_format else \
            {"system_prompt": system_prompt}
        self.env = FunctionCallingEnv(dataset_path=str(dataset_path), reward=reward, handler=handler, checker=checker,
                                      **rendering)
        self.__name__ = f"fcenv_{reward if isinstance(reward, str) else getattr(reward, '__name__', 'reward')}"
        self.verdicts: list[dict[str, Any]] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], task_index: Sequence[int],
                 **_: Any) -> list[float]:
        rewards = []
        for completion, index in zip(completions, task_index):
            self.env.reset(options={"index": int(index)})
            _, reward, _, _, info = self.env.step(_text(completion))
            rewards.append(float(reward))
            self.verdicts.append({"id": info["id"], "valid": info["valid"], "error_type": info["error_type"]})
        return rewards

    @property
    def accuracy(self) -> float:
        """The share of valid verdicts so far."""
        return sum(v["valid"] for v in self.verdicts) / len(self.verdicts) if self.verdicts else 0.0
