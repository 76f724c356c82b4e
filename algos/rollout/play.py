"""Play episodes on a set of environments in lockstep, sampling actions with a rollout engine.

Each observation is the whole chat so far, rendered; its tokens (a chat longer than the
context limit cut from the middle, the system prompt and the latest messages kept) are stored
with the action as the exact context that produced it, so the trainer scores every action on
the tokens it was sampled from. Tool results and prompts
are context only; only action tokens are ever trained on. Episodes always run to their end
within one call, so no environment state outlives an iteration (which makes resuming exact).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

from fcenv.algos.rollout.codec import CONTEXT_OVERFLOW, ContextTooLong, TextCodec, chat_of
from fcenv.algos.rollout.engine import Engine
from fcenv.algos.rollout.records import ActionRecord, EpisodeRecord, Rollout


def play(
    envs: Sequence[gym.Env],
    engine: Engine,
    codec: TextCodec,
    next_task: Callable[[int], int | tuple[int, dict] | None],
    *,
    max_new_tokens: int,
    actions_per_env: int | None = None,
    generator: torch.Generator | None = None,
    greedy: bool = False,
) -> Rollout:
    """Run episodes until every env is finished.

    ``next_task(thread)`` gives the dataset index of a thread's next episode, an ``(index,
    snapshot)`` pair to continue an episode from an env snapshot (its recorded actions are then
    the continuation's only), or None to stop that thread. With ``actions_per_env``, a thread also stops starting episodes once
    it has taken that many actions (the running episode still finishes).
    """
    start = time.perf_counter()
    actions: list[ActionRecord] = []
    episodes: list[EpisodeRecord] = []
    current: list[EpisodeRecord | None] = [None] * len(envs)
    observations: list[str | None] = [None] * len(envs)
    encoded: list[tuple[list[int], bool] | None] = [None] * len(envs)  # each thread's next context, cut or not
    taken = [0] * len(envs)
    stopped = [False] * len(envs)
    prompt_tokens, cached_tokens = 0, None
    while True:
        for thread, env in enumerate(envs):
            if current[thread] is not None or stopped[thread]:
                continue
            if actions_per_env is not None and taken[thread] >= actions_per_env:
                stopped[thread] = True
                continue
            begin = next_task(thread)
            if begin is None:
                stopped[thread] = True
                continue
            index, snapshot = begin if isinstance(begin, tuple) else (begin, None)
            observation, info = env.reset(options={"index": int(index)})
            if snapshot is not None:
                observation, info = env.unwrapped.restore(snapshot)
            current[thread] = EpisodeRecord(task_index=int(index), task_id=str(info.get("id", index)))
            observations[thread] = observation
            encoded[thread] = codec.encode_counted(observation, chat_of(info), current[thread].task_id)
        live = [t for t in range(len(envs)) if current[t] is not None]
        if not live:
            break
        samples = engine.sample([encoded[t][0] for t in live], max_new_tokens, generator=generator, greedy=greedy)
        prompt_tokens += sum(len(encoded[t][0]) for t in live)
        if samples.cached_tokens is not None:
            cached_tokens = (cached_tokens or 0) + sum(samples.cached_tokens)
        for thread, action, logp in zip(live, samples.actions, samples.logprobs):
            step = take_action(envs[thread], thread, current[thread], actions, engine.stop_ids, codec,
                               observations[thread], *encoded[thread], action, logp)
            taken[thread] += 1
            observations[thread], encoded[thread] = step.observation, step.context
            if step.done:
                episodes.append(current[thread])
                current[thread] = None
    return Rollout(actions=actions, episodes=episodes, seconds=time.perf_counter() - start, prompt_tokens=prompt_tokens,
                   cached_tokens=cached_tokens)


@dataclass
class Step:
    observation: str
    info: dict[str, Any]
    done: bool
    context: tuple[list[int], bool] | None = None  # the next action's context (tokens, cut), unless terminated

    @property
    def after_tool_results(self) -> bool:
        """The step's calls ran and the turn goes on: the chat now ends with their results."""
        return not self.done and bool(self.info.get("calls")) and "turn_valid" not in self.info


def take_action(env: gym.Env, thread: int, episode: EpisodeRecord, actions: list[ActionRecord],
                stop_ids: Sequence[int], codec: TextCodec, observation: str, context: list[int], cut: bool,
                action: list[int], logp: list[float]) -> Step:
    """Step ``env`` with an action sampled in ``context`` (the tokens of ``observation``), append
    its record to ``actions`` and ``episode``, and build the next context (``TextCodec.follow``);
    close the episode when it ended (the next context is its bootstrap when the env cut it short)."""
    text = codec.decode(action)
    following, reward, terminated, truncated, info = env.step(text)
    episode.action_indices.append(len(actions))
    actions.append(ActionRecord(thread=thread, context=context, action=action, sample_logprobs=logp, text=text,
                                reward=float(reward), info=_summary(info),
                                hit_length_limit=not action or action[-1] not in stop_ids,
                                turn=_turn_of(info), context_cut=cut))
    step = Step(following, info, bool(terminated or truncated))
    if not terminated:
        try:
            step.context = codec.follow(context, cut, action, observation, following, chat_of(info), episode.task_id)
        except ContextTooLong:
            # The chat outgrew the window (not even its system prompt and latest message fit):
            # the episode ends here and fails, as BFCL's inference fails such an entry. Its
            # rewards so far stand; nothing more is paid.
            actions[-1].info.update(valid=False, error_type=CONTEXT_OVERFLOW)
            step.done, terminated = True, True
    if step.done:
        episode.terminated = bool(terminated)
        if not terminated:
            episode.bootstrap_context = step.context[0]
    return step


def _turn_of(info: dict[str, Any]) -> int:
    """The turn an action was played in: an agentic episode counts its turns over its
    conversations (``played_turn``), whose own ``turn`` starts again in each one."""
    return int(info.get("played_turn", info.get("turn", 0)))


def _summary(info: dict[str, Any]) -> dict[str, Any]:
    """The parts of a step's info the trainer logs (the chat itself is not kept)."""
    return {
        "id": info.get("id"),
        "category": info.get("category"),
        "valid": bool(info.get("valid", False)),
        "error_type": info.get("error_type"),
        "calls": len(info.get("calls") or []),  # how many calls the action made
        "facets": dict(info.get("facets") or {}),
        "turn_facets": dict(info.get("turn_facets") or {}),  # multi-turn, at a turn's end
    }
