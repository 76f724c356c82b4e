"""fcenv's tasks inside verl (``pip install "fcenv[verl]"``; verl 0.9.1 wants transformers<5.11).

Two entries, both over the doors' core (``fcenv.doors``):

- ``FunctionCallingAgentLoop``, an agent loop (verl's ``AgentLoopBase``) that plays one fcenv
  episode per trajectory: every BFCL category, several user turns, multi_turn_miss_func's
  announcements, prompting and FC mode. It samples each step from verl's inference servers
  (``server_manager.generate``) on the exact token sequence so far, appends the env's messages as
  tokens with ``response_mask`` 0, and returns the episode's reward as ``reward_score`` (BFCL's
  verdict with ``bfcl``, or ``shaped`` / ``steps``), so verl needs no reward function. Declare it
  in an agent-loop file (``examples/verl/agent_loops.yaml``) whose keys beside ``_target_`` are
  the env's settings, and point the rows at it (``dataset_rows``).
- ``FunctionCallingTool``, a verl ``BaseTool`` for one function of a task: ``create`` starts
  (or joins) the trajectory's episode, ``execute`` runs one call on it and returns the env's
  tool message, ``calc_reward`` ends the episode and returns its reward, ``release`` lets it go.
  verl's own ToolAgentLoop creates and releases an instance around every call and never asks for
  ``calc_reward``, so with it the episode is kept per trajectory (its request id) and the verdict
  reaches no reward; train with the agent loop, which judges whole episodes.

``examples/verl/`` holds the GRPO recipe. Its GPU parts (vLLM servers, FSDP workers) are not
run by this package's tests, which drive both classes on the CPU with real episodes.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from fcenv.chat_mode import ChatMode
from fcenv.doors.calls import CallRefused, written_call
from fcenv.doors.core import Episode, make_env
from fcenv.doors.tokens import ChatTemplate, TokenEpisode

AGENT_NAME = "fcenv_agent"
DATA_SOURCE = "fcenv"
# The env's settings an agent-loop file or a tool's config may give.
ENV_SETTINGS = ("reward", "system_prompt", "tool_format", "handler", "max_steps_per_turn", "backend_package")


def _settings(values: dict[str, Any]) -> dict[str, Any]:
    """The env's settings among ``values`` (an agent-loop file's keys, a tool's config), a tool
    format's name resolved once, by its chat mode: the loop's template and the tool's calls take
    the ``ToolFormat`` from here, and the envs made from these settings take it as it is."""
    settings = {key: values[key] for key in ENV_SETTINGS if values.get(key) is not None}
    if "tool_format" in settings:
        settings["tool_format"] = ChatMode(tool_format=settings["tool_format"]).tool_format
    return settings


def dataset_rows(dataset_path: str | Path, *, agent_name: str = AGENT_NAME, indices: Sequence[int] | None = None,
                 **env_options: Any) -> list[dict[str, Any]]:
    """One row per task (or chosen index) in verl's RL dataset layout: ``prompt`` (the task's first
    chat), ``data_source``, ``agent_name`` (the agent loop that plays it), ``reward_model`` (unused:
    the loop scores the episode) and ``extra_info`` (``dataset_path``, ``task_id``, ``index``).
    ``env_options`` decide the prompt (system prompt, FC mode) and must match the loop's."""
    env = make_env(dataset_path, **env_options)
    chosen = range(len(env.tasks)) if indices is None else [int(i) for i in indices]
    rows = []
    for index in chosen:
        episode = Episode(env, index=index)
        rows.append({"data_source": DATA_SOURCE, "prompt": episode.messages, "agent_name": agent_name,
                     "reward_model": {"style": "rule", "ground_truth": episode.task.id},
                     "extra_info": {"dataset_path": str(dataset_path), "task_id": episode.task.id, "index": index}})
    return rows


def _task(extra_info: Any, default_dataset: str | None) -> tuple[str, str]:
    info = dict(extra_info or {})
    dataset = info.get("dataset_path") or default_dataset
    if not dataset or not info.get("task_id"):
        raise ValueError("an fcenv trajectory needs its task: extra_info with 'task_id' and 'dataset_path' (rows from "
                         "fcenv.verl.dataset_rows), or dataset_path in the agent loop's settings")
    return str(dataset), str(info["task_id"])


class FunctionCallingAgentLoop(AgentLoopBase):
    """One fcenv episode per trajectory, sampled from verl's servers token by token.

    Settings (keys of the agent-loop file): ``dataset_path`` (for rows that name none),
    ``max_step_tokens`` (one step's bound; default the rollout's ``response_length``, which also
    bounds the whole episode) and the env's ``reward``, ``system_prompt``, ``tool_format``,
    ``handler``, ``max_steps_per_turn``, ``backend_package``.
    """

    def __init__(self, *args: Any, dataset_path: str | None = None, max_step_tokens: int | None = None,
                 **kwargs: Any):
        options = {key: kwargs.pop(key) for key in ENV_SETTINGS if key in kwargs}
        super().__init__(*args, **kwargs)
        self.dataset_path = dataset_path
        self.env_options = _settings(options)
        self.response_length = int(self.rollout_config.response_length)
        self.max_step_tokens = int(max_step_tokens or self.response_length)
        tool_format = self.env_options.get("tool_format")
        self.template = ChatTemplate(self.tokenizer, tool_format.chat_template if tool_format else None)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        dataset, task_id = _task(kwargs.get("extra_info"), self.dataset_path)
        episode = Episode(make_env(dataset, **self.env_options), task_id=task_id)
        playing = TokenEpisode(episode, self.template, budget=self.response_length)
        request_id, sampled_logprobs = uuid4().hex, True
        while not playing.done:
            if playing.room <= 0:
                playing.finish()
                break
            params = {**sampling_params, "max_tokens": min(self.max_step_tokens, playing.room)}
            output = await self.server_manager.generate(request_id=request_id, prompt_ids=playing.context,
                                                        sampling_params=params)
            sampled_logprobs = sampled_logprobs and output.log_probs is not None
            playing.add(list(output.token_ids), output.log_probs)
        summary = episode.summary()
        return AgentLoopOutput(
            prompt_ids=playing.prompt_ids, response_ids=playing.completion_ids, response_mask=playing.mask,
            response_logprobs=playing.logprobs if sampled_logprobs else None, reward_score=summary["reward"],
            num_turns=len(episode.messages), metrics=AgentLoopMetrics(),
            extra_fields={"fcenv_valid": float(summary["valid"]), "fcenv_actions": playing.actions})


# ---------------------------------------------------------------------------------------------
# The tool.

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}


def tool_schemas(dataset_path: str | Path, **env_options: Any) -> list[dict[str, Any]]:
    """verl's tool schema (OpenAI format) of every function the tasks of a question file use,
    for a tool config file: ``{"class_name": "fcenv.verl.FunctionCallingTool", "config": {"type":
    "native", ...}, "tool_schema": ...}`` per function. verl's schema keeps each parameter's type,
    description and enum only."""
    env = make_env(dataset_path, **env_options)
    seen: dict[str, dict[str, Any]] = {}
    for task in env.tasks:
        for doc in task.functions:
            if doc["name"] in seen:
                continue
            parameters = doc.get("parameters") or {}
            properties = {name: {k: v for k, v in {"type": _BFCL_TYPES.get(spec.get("type"), spec.get("type", "string")),
                                                   "description": spec.get("description"),
                                                   "enum": spec.get("enum")}.items() if v is not None}
                          for name, spec in (parameters.get("properties") or {}).items()}
            seen[doc["name"]] = {"type": "function", "function": {
                "name": doc["name"], "description": doc.get("description", ""),
                "parameters": {"type": "object", "properties": properties,
                               "required": list(parameters.get("required") or [])}}}
    return list(seen.values())


class FunctionCallingTool(BaseTool):
    """One function of fcenv's tasks as a verl tool; its calls run on the trajectory's episode.

    ``config``: ``dataset_path`` (for instances whose ``create_kwargs`` name none) and the env's
    settings (``reward``, ``tool_format``, ...; FC mode with ``tool_format``, in which the call is
    written back in the family's format and judged by BFCL's FC rules). ``create_kwargs``:
    ``dataset_path`` and ``task_id``. Every instance of one trajectory (``agent_data.request_id``
    where verl passes it) shares its episode.
    """

    # Instances and episodes (by trajectory) are shared by the tools of every function, as one
    # trajectory calls several; bounded, since verl's ToolAgentLoop never ends its episodes.
    _instances: dict[str, dict[str, Any]] = {}
    _episodes: OrderedDict[str, Episode] = OrderedDict()
    MAX_EPISODES = 4096

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
        super().__init__(config, tool_schema)
        self.dataset_path = config.get("dataset_path")
        self.env_options = _settings(config)

    async def create(self, instance_id: str | None = None, create_kwargs: dict | None = None,
                     **kwargs: Any) -> tuple[str, ToolResponse]:
        instance_id = instance_id or uuid4().hex
        dataset, task_id = _task(create_kwargs or kwargs, self.dataset_path)
        self._instances[instance_id] = {"dataset_path": dataset, "task_id": task_id}
        return instance_id, ToolResponse()

    def _episode(self, instance_id: str, agent_data: Any = None) -> tuple[str, Episode]:
        key = getattr(agent_data, "request_id", None) or instance_id
        episode = self._episodes.get(key)
        if episode is None:
            task = self._instances[instance_id]
            episode = Episode(make_env(task["dataset_path"], **self.env_options), task_id=task["task_id"])
            self._episodes[key] = episode
            while len(self._episodes) > self.MAX_EPISODES:
                self._episodes.popitem(last=False)
        self._episodes.move_to_end(key)
        return key, episode

    def _call_text(self, parameters: Any) -> str:
        """The model's one call as the text the env decodes; ``CallRefused`` when no text would
        read back as exactly that call (an argument name with call syntax in it, say)."""
        return written_call(self.name, parameters, tool_format=self.env_options.get("tool_format"),
                            handler=self.env_options.get("handler"))

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
                      ) -> tuple[ToolResponse, float, dict]:
        """Runs the call on the episode: the env's tool message as the response, the step's reward
        (``steps`` pays calls at once; ``bfcl`` and ``shaped`` pay at a turn's end) and the step's
        facets as metrics. A call that cannot be handed over unchanged runs nothing: its response
        is an error saying why, with no reward, and the episode does not move."""
        key, episode = self._episode(instance_id, kwargs.get("agent_data"))
        if episode.done:
            return ToolResponse(text="The episode is over."), 0.0, {"valid": float(episode.valid)}
        try:
            text = self._call_text({} if parameters is None else parameters)
        except CallRefused as exc:
            return ToolResponse(text=json.dumps({"error": str(exc)})), 0.0, {"refused": 1.0}
        step = episode.step(text)
        results = [m.get("content", "") for m in step.messages if m.get("role") == "tool"]
        text = "\n".join(str(r) for r in results) if results else json.dumps({"error": step.info.get("error_type")})
        return ToolResponse(text=text), step.reward, dict(step.info.get("facets") or {})

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """Ends the episode where it stands (its remaining turns unanswered) and returns its
        reward: 1.0 for a BFCL-valid episode, less for a failing one."""
        key, episode = self._episode(instance_id, kwargs.get("agent_data"))
        episode.finish()
        self._episodes.pop(key, None)
        return episode.reward

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._instances.pop(instance_id, None)
        self._episodes.pop(instance_id, None)  # an episode kept by instance, not by trajectory
