"""fcenv's tasks as SkyRL-gym environments (``pip install "fcenv[skyrl]"``).

SkyRL's generator makes one environment per trajectory with ``skyrl_gym.make(env_class,
env_config=..., extras=<the dataset row>)``, starts it with ``init(prompt)`` and steps it with
the model's text until ``done``. Here each environment is one fcenv episode: the row names its
task (``extra_info``: ``dataset_path`` and ``task_id``), ``env_config`` holds the env's settings
(``reward``, ``system_prompt``, ``tool_format``, ...; a ``dataset_path`` there serves rows that
name none), and each step's observations are the env's messages after the model's (tool results,
the next user turn), its reward the env's (BFCL's verdict with ``bfcl``, ``shaped`` or
``steps``)::

    import skyrl_gym
    from fcenv.skyrl import dataset_rows, register

    register()                                     # env_class "fcenv"
    rows = dataset_rows("multi_turn_train")        # write them to parquet for skyrl-train
    env = skyrl_gym.make("fcenv", env_config={"reward": "shaped"}, extras=rows[0])
    chat, info = env.init(rows[0]["prompt"])
    out = env.step("[add(a=2, b=30)]")            # out["observations"], out["reward"], out["done"]

SkyRL's generator renders the chat with the tokenizer's template without tools, so prompting
mode (BFCL's, the default) is what it plays; in FC mode (``tool_format``) ``init`` returns the
tools in its info for a generator that passes them to the template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from fcenv.doors.core import Episode, make_env

ENV_ID = "fcenv"


def register(env_id: str = ENV_ID) -> str:
    """Registers the environment with skyrl-gym under ``env_id`` (once; again is a no-op).
    Call it where SkyRL's training process starts, as its own examples register theirs."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        skyrl_register(id=env_id, entry_point=f"{__name__}:FunctionCallingTextEnv")
    return env_id


def dataset_rows(dataset_path: str | Path, *, env_id: str = ENV_ID, indices: Sequence[int] | None = None,
                 **env_options: Any) -> list[dict[str, Any]]:
    """One row per task (or per chosen index) in SkyRL's dataset layout: ``prompt`` (the task's
    first chat), ``env_class`` and ``extra_info`` (``dataset_path``, ``task_id``).
    ``env_options`` are the env's, as in ``env_config``; they decide the prompt (system prompt,
    FC mode)."""
    env = make_env(dataset_path, **env_options)
    chosen = range(len(env.tasks)) if indices is None else [int(i) for i in indices]
    rows = []
    for index in chosen:
        episode = Episode(env, index=index)
        rows.append({"prompt": episode.messages, "env_class": env_id,
                     "extra_info": {"dataset_path": str(dataset_path), "task_id": episode.task.id}})
    return rows


class FunctionCallingTextEnv(BaseTextEnv):
    """One fcenv episode as a SkyRL-gym text environment."""

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None):
        super().__init__()
        options = {key: (env_config or {})[key] for key in (env_config or {})}  # a dict, a DictConfig
        info = dict((extras or {}).get("extra_info") or {})
        dataset = info.get("dataset_path") or options.pop("dataset_path", None)
        options.pop("dataset_path", None)
        options.pop("env_class", None)  # skyrl-train's configs may name the class they configure
        if dataset is None or "task_id" not in info:
            raise ValueError("an fcenv environment needs its task: extras['extra_info'] with 'dataset_path' and "
                             "'task_id' (rows from fcenv.skyrl.dataset_rows), or 'dataset_path' in env_config")
        self.episode = Episode(make_env(dataset, **options), task_id=str(info["task_id"]))
        # The episode ends itself (BFCL's turns and step limit); this is SkyRL's turn counter.
        self.max_turns = int((extras or {}).get("max_turns") or 10_000)

    def init(self, prompt: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The task's first chat (the env's, whatever the row's prompt held), with the task id and,
        in FC mode, the tools."""
        info: dict[str, Any] = {"task_id": self.episode.task.id}
        if self.episode.tools is not None:
            info["tools"] = self.episode.tools
        return [dict(m) for m in self.episode.messages], info

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        step = self.episode.step(action)
        metadata = {"valid": step.info.get("valid"), "error_type": step.info.get("error_type"),
                    "calls": step.info.get("calls"), "turn": step.info.get("turn")}
        return BaseTextEnvStepOutput(observations=step.messages, reward=step.reward, done=step.done,
                                     metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        return {"valid": float(self.episode.valid), "steps": self.episode.steps, "reward": self.episode.reward}
