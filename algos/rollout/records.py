"""What a rollout leaves behind: each action with its exact context, and the episodes.

An action keeps the token ids it was sampled from and its own ids (so the trainer scores what
was sampled), its sampling log-probs, its reward and a summary of the env's info. An episode
lists its actions by index; with branching, episodes may share their first actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ActionRecord:
    thread: int
    context: list[int]
    action: list[int]
    sample_logprobs: list[float]
    text: str
    reward: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    hit_length_limit: bool = False  # no stop token within max_new_tokens
    turn: int = 0  # the BFCL turn this action was taken in (multi-turn episodes)
    context_cut: bool = False  # the chat was longer than the context limit and cut from the middle


@dataclass
class EpisodeRecord:
    task_index: int
    task_id: str
    action_indices: list[int] = field(default_factory=list)
    terminated: bool = False
    # Set when the env cut the episode short: the critic's value of this context is the
    # bootstrap after the last action.
    bootstrap_context: list[int] | None = None

    def total_reward(self, actions: Sequence[ActionRecord]) -> float:
        return sum(actions[i].reward for i in self.action_indices)


@dataclass
class Rollout:
    actions: list[ActionRecord]
    episodes: list[EpisodeRecord]  # with branching, episodes may share their first actions
    seconds: float
    branches: int = 0  # episodes that branched from another one (algos.rollout.branching)
    # The tokens of every context sampled from (a naive engine prefills them all), and those the
    # engine's prefix cache held (None: an engine without one).
    prompt_tokens: int = 0
    cached_tokens: int | None = None

    @property
    def generated_tokens(self) -> int:
        return sum(len(a.action) for a in self.actions)
