"""ARPO's entropy-based branching (the RL stage of ET-Agent) on the env's snapshots.

A group of ``--group_size`` threads plays one task; the group's threads are its sample budget.
On a multi-turn or agentic (memory, web search) task half of them start the episode and the rest wait. After a step whose
calls ran (the chat now ends with their results and the turn goes on), each chain's next
action is sampled as usual and its normalised entropy over its first tokens compared with the
chain's first action's: with ``p = U(0, 1) - beta * (H_now - H_first)`` clamped to [0, 1], the
chain branches when ``p <= threshold`` and its group has a waiting thread. The branch restores
the env snapshot taken before that sample (tool results included), shares the chain's earlier
actions, and samples its own action there in the next round; rising uncertainty after a tool
result branches more. When a group has no live chain left, its waiting threads start fresh
episodes (ARPO fills unused budget so). Single-turn tasks have no tool results: every thread
starts, and this is GRPO.

A shared action is recorded once and listed in every episode that contains it; the group
estimators give it the mean of those episodes' advantages (ARPO's soft sharing of prefixes).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import gymnasium as gym
import torch

from fcenv.algos.rollout.codec import TextCodec, chat_of
from fcenv.algos.rollout.engine import Engine
from fcenv.algos.rollout.play import take_action
from fcenv.algos.rollout.records import ActionRecord, EpisodeRecord, Rollout


@dataclass(frozen=True)
class BranchingSettings:
    entropy_tokens: int = 20  # the first tokens of an action whose entropy is measured (ARPO: ~20)
    beta: float = 0.2  # how much a rise in entropy raises the chance to branch
    threshold: float = 0.5  # branch when p <= threshold


@dataclass
class _Chain:
    episode: EpisodeRecord
    observation: str
    context: tuple[list[int], bool]  # the next action's context tokens, and whether the chat was cut
    first_entropy: float | None = None  # of the chain's first action (a branch inherits it)
    after_tool_results: bool = False


def play_branching(
    envs: Sequence[gym.Env],
    engine: Engine,
    codec: TextCodec,
    task_of_group: Callable[[int], int],
    group_size: int,
    *,
    max_new_tokens: int,
    settings: BranchingSettings = BranchingSettings(),
    generator: torch.Generator | None = None,
) -> Rollout:
    """One episode tree per group of ``group_size`` envs (threads ``g * group_size ...``),
    each group on the task ``task_of_group(g)``."""
    start = time.perf_counter()
    actions: list[ActionRecord] = []
    episodes: list[EpisodeRecord] = []
    chains: list[_Chain | None] = [None] * len(envs)
    used = [False] * len(envs)
    tasks = [int(task_of_group(g)) for g in range(len(envs) // group_size)]
    branches = 0

    def members(group: int) -> range:
        return range(group * group_size, (group + 1) * group_size)

    def begin(thread: int) -> None:
        index = tasks[thread // group_size]
        observation, info = envs[thread].reset(options={"index": index})
        episode = EpisodeRecord(task_index=index, task_id=str(info.get("id", index)))
        chains[thread] = _Chain(episode, observation, codec.encode_counted(observation, chat_of(info), episode.task_id))
        used[thread] = True

    for group, index in enumerate(tasks):
        task = envs[group * group_size].unwrapped.tasks[index]
        with_tool_results = task.is_multi_turn or task.kind == "agentic"  # memory and web search call tools too
        for thread in members(group)[: math.ceil(group_size / 2) if with_tool_results else group_size]:
            begin(thread)
    while True:
        for group in range(len(tasks)):  # spent groups fill their unused budget with fresh episodes
            if not any(chains[t] for t in members(group)):
                for thread in members(group):
                    if not used[thread]:
                        begin(thread)
        live = [t for t in range(len(envs)) if chains[t] is not None]
        if not live:
            break
        snapshots = {t: envs[t].unwrapped.snapshot() for t in live if chains[t].after_tool_results}
        samples = engine.sample([chains[t].context[0] for t in live], max_new_tokens, generator=generator,
                                entropy_tokens=settings.entropy_tokens)
        draws = torch.rand(len(live), generator=generator).tolist()
        for thread, entropy, draw in zip(live, samples.entropies, draws):
            chain = chains[thread]
            if chain.first_entropy is None:
                chain.first_entropy = entropy
                continue
            if thread not in snapshots:
                continue
            p = min(max(draw - settings.beta * (entropy - chain.first_entropy), 0.0), 1.0)
            free = next((t for t in members(thread // group_size) if not used[t]), None)
            if p <= settings.threshold and free is not None:
                envs[free].reset(options={"index": chain.episode.task_index})  # the wrappers' order check
                observation, _ = envs[free].unwrapped.restore(snapshots[thread])
                shared = EpisodeRecord(task_index=chain.episode.task_index, task_id=chain.episode.task_id,
                                       action_indices=list(chain.episode.action_indices))
                # The snapshot was taken where the chain's context was built: the branch continues it.
                chains[free] = _Chain(shared, observation, chain.context, chain.first_entropy)
                used[free] = True
                branches += 1
        for thread, action, logp in zip(live, samples.actions, samples.logprobs):
            chain = chains[thread]
            step = take_action(envs[thread], thread, chain.episode, actions, engine.stop_ids, codec, chain.observation,
                               *chain.context, action, logp)
            chain.observation, chain.context = step.observation, step.context
            chain.after_tool_results = step.after_tool_results
            if step.done:
                episodes.append(chain.episode)
                chains[thread] = None
    return Rollout(actions=actions, episodes=episodes, seconds=time.perf_counter() - start, branches=branches)
