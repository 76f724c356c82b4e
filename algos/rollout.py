"""Play episodes on a set of environments in lockstep, sampling actions from the policy.

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
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import torch

from algos.batching import truncate_left
from algos.config import ConfigError
from algos.policy import Policy


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
    branches: int = 0  # episodes that branched from another one (algos.branching)

    @property
    def generated_tokens(self) -> int:
        return sum(len(a.action) for a in self.actions)


class ContextTooLong(ConfigError):
    """Even the system prompt and the latest message do not fit the context window."""


class ToolChat(list):
    """A chat of FC mode (native tool calling): its messages, and the tools its template shows."""

    def __init__(self, messages, tools):
        super().__init__(messages)
        self.tools = tools


def chat_of(info: dict) -> list[dict] | None:
    """The chat of a step's info, as ``TextCodec`` needs it to cut a long chat."""
    messages = info.get("messages")
    if messages is None or info.get("tools") is None:
        return messages
    return ToolChat(messages, info["tools"])


class TextCodec:
    """Observation to context tokens (cut to the context limit), action tokens to text.

    A chat longer than the limit is cut from the middle, never from the start: the system
    prompt (the function docs) and the latest messages are kept, the oldest messages after
    the system prompt are dropped whole. With ``render`` (the env's renderer) and the chat's
    messages the cut re-renders the kept messages; without them the tokens are cut from the
    left, as for a plain text.
    """

    def __init__(self, tokenizer, context_limit: int, render: Callable[..., str] | None = None):
        self.tokenizer = tokenizer
        self.context_limit = context_limit
        self.render = render

    def render_chat(self, messages: Sequence[dict]) -> str:
        """The chat rendered as the env renders it (with its tools in FC mode, ``ToolChat``)."""
        tools = getattr(messages, "tools", None)
        return self.render(list(messages)) if tools is None else self.render(list(messages), tools)

    def tokens(self, text: str) -> list[int]:
        # The renderer already wrote any special tokens (chat template), so none are added.
        ids = self.tokenizer(text, add_special_tokens=False).input_ids
        return ids or [self.tokenizer.eos_token_id]  # an empty observation still needs one position

    def encode(self, observation: str, messages: Sequence[dict] | None = None) -> list[int]:
        return self.encode_counted(observation, messages)[0]

    def encode_counted(self, observation: str, messages: Sequence[dict] | None = None,
                       entry: str = "") -> tuple[list[int], bool]:
        """(context tokens, whether the chat was cut). Raises ``ContextTooLong`` naming the
        entry and the token counts when not even the system prompt and the latest message fit."""
        ids = self.tokens(observation)
        if len(ids) <= self.context_limit:
            return ids, False
        if self.render is None or not messages:
            return truncate_left(ids, self.context_limit), True
        tools = getattr(messages, "tools", None)

        def render(kept: list[dict]) -> str:
            return self.render_chat(kept if tools is None else ToolChat(kept, tools))

        head = list(messages[:1]) if messages[0].get("role") == "system" else []
        rest = list(messages[len(head):])
        # The fewest dropped messages that fit: dropping more never makes a chat longer.
        low, high = 1, len(rest) - 1
        best = None
        while low <= high:
            middle = (low + high) // 2
            kept = self.tokens(render(head + rest[middle:]))
            if len(kept) <= self.context_limit:
                best, high = kept, middle - 1
            else:
                low = middle + 1
        if best is None:
            if head:
                head_tokens = len(self.tokens(render(head)))
                last_tokens = len(self.tokens(render(head + rest[-1:]))) - head_tokens
                fixed = "the system prompt" + (" (with the tools)" if tools is not None else "")
            else:  # FC mode without a system message: the template shows the tools with the messages
                head_tokens, last_tokens = 0, len(self.tokens(render(rest[-1:])))
                fixed = "the system prompt (none)"
            raise ContextTooLong(
                f"entry {entry or '?'}: the context does not fit the window of {self.context_limit} tokens "
                f"(--context_window minus --max_new_tokens) even when cut from the middle: {fixed} alone is "
                f"{head_tokens} tokens, the latest message {last_tokens}"
                f"{' with the tools' if tools is not None and not head else ''} and the whole chat {len(ids)}; "
                f"raise --context_window or use a shorter {'--system_prompt' if tools is None else 'set of tools'}")
        return best, True

    def decode(self, action: Sequence[int]) -> str:
        return self.tokenizer.decode(list(action), skip_special_tokens=True)


def play(
    envs: Sequence[gym.Env],
    policy: Policy,
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
    chats: list[list[dict] | None] = [None] * len(envs)
    taken = [0] * len(envs)
    stopped = [False] * len(envs)
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
            observations[thread], chats[thread] = observation, chat_of(info)
        live = [t for t in range(len(envs)) if current[t] is not None]
        if not live:
            break
        encoded = [codec.encode_counted(observations[t], chats[t], current[t].task_id) for t in live]
        contexts = [tokens for tokens, _ in encoded]
        sampled, logps = policy.sample(contexts, max_new_tokens, generator=generator, greedy=greedy)
        for thread, (context, cut), action, logp in zip(live, encoded, sampled, logps):
            step = take_action(envs[thread], thread, current[thread], actions, policy, codec, context, cut, action, logp)
            taken[thread] += 1
            observations[thread], chats[thread] = step.observation, chat_of(step.info)
            if step.done:
                episodes.append(current[thread])
                current[thread] = None
    return Rollout(actions=actions, episodes=episodes, seconds=time.perf_counter() - start)


@dataclass
class Step:
    observation: str
    info: dict[str, Any]
    done: bool

    @property
    def after_tool_results(self) -> bool:
        """The step's calls ran and the turn goes on: the chat now ends with their results."""
        return not self.done and bool(self.info.get("calls")) and "turn_valid" not in self.info


def take_action(env: gym.Env, thread: int, episode: EpisodeRecord, actions: list[ActionRecord], policy: Policy,
                codec: TextCodec, context: list[int], cut: bool, action: list[int], logp: list[float]) -> Step:
    """Step ``env`` with a sampled action, append its record to ``actions`` and ``episode``, and
    close the episode when it ended (the bootstrap context when the env cut it short)."""
    text = codec.decode(action)
    observation, reward, terminated, truncated, info = env.step(text)
    episode.action_indices.append(len(actions))
    actions.append(ActionRecord(thread=thread, context=context, action=action, sample_logprobs=logp, text=text,
                                reward=float(reward), info=_summary(info),
                                hit_length_limit=not action or action[-1] not in policy.stop_ids,
                                turn=int(info.get("turn", 0)), context_cut=cut))
    if terminated or truncated:
        episode.terminated = bool(terminated)
        if not terminated:
            episode.bootstrap_context = codec.encode(observation, chat_of(info))
    return Step(observation, info, bool(terminated or truncated))


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
