"""The properties every fuzz input must keep, and the envs the fuzzers step.

Decoders: a list of ``Call`` (a string name, a dict of arguments) or a ``DecodeError`` with one
of BFCL's two kinds (``assert_decoded``). Checkers: a ``CheckResult`` with a bool verdict, an
error type exactly when invalid, facets in [0, 1] (``assert_check_result``). Env steps: the
observation in the observation space, a finite reward in [0, 1], bool flags, facets in [0, 1],
at most ``MAX_STEP_CALLS`` calls (``assert_step``); in native tool-calling (FC) mode a step within
a turn renders only its new messages (``CountingRenderer``, ``assert_bounded_rendering``).

tests/fuzz/ asserts them on hypothesis' inputs (harness/strategies.py); bench/bench_fuzz.py
times the same inputs.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

from fcenv.checkers import CheckResult
from fcenv.env import FunctionCallingEnv
from fcenv.tasks import Task
from fcenv.handlers import Call, DecodeError
from fcenv.handlers.base import MAX_STEP_CALLS
from harness.strategies import Choices, Fuzz, decoded_calls
from harness.strategies_multi_turn import multi_turn_result

# ---- decoders and checkers -------------------------------------------------------------------

DECODE_KINDS = ("decoder_failed", "decoder_wrong_output_format")


def assert_decoded(result_or_error) -> None:
    if isinstance(result_or_error, DecodeError):
        assert result_or_error.kind in DECODE_KINDS
        return
    assert type(result_or_error) is list
    for call in result_or_error:
        assert isinstance(call, Call) and isinstance(call.name, str) and isinstance(call.arguments, dict)


def assert_check_result(result, valid_means_all_ones: bool = False) -> None:
    assert isinstance(result, CheckResult)
    assert type(result.valid) is bool
    assert (result.error_type is None) == result.valid, (result.valid, result.error_type)
    assert isinstance(result.errors, list)
    facets = dict(result.facets)
    for name, value in facets.items():
        assert isinstance(value, (int, float)) and 0.0 <= value <= 1.0, (name, value)
    if valid_means_all_ones and result.valid:
        assert all(value == 1.0 for value in facets.values()), facets


def single_turn_case(r: Choices, fuzz: Fuzz) -> tuple[Task, list[Call] | DecodeError]:
    task = r.draw(fuzz.tasks("single_turn"))
    return task, decoded_calls(r, fuzz, task)


def multi_turn_case(r: Choices, fuzz: Fuzz) -> tuple[Task, object]:
    task = r.draw(fuzz.tasks("multi_turn"))
    if r.one_in(40):  # not a list of turns: BFCL's inference error
        return task, r.pick(["error text", None, {"turn": 1}, 3])
    return task, multi_turn_result(r, fuzz, task)


# ---- env steps ----------------------------------------------------------------------------

# One env per family of single-turn categories, each with both rewards; BFCL's decoder for
# the category (None), and, for some, the lenient "auto" decoder or JSON tool calls, whose
# arguments reach the checkers and backends with JSON's types.
SINGLE_TURN = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
               "live_parallel_multiple", "simple_java", "simple_javascript", "irrelevance", "live_irrelevance",
               "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
REWARDS = ("bfcl", "shaped")
OTHER_HANDLERS = {"simple_python": ("auto", "json"), "live_multiple": ("auto",), "irrelevance": ("tool_call",),
                  "multi_turn_base": ("auto", "json"), "multi_turn_long_context": ("auto",)}


def env_choices(categories: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
    return [(c, r, h) for c in categories for r in REWARDS for h in (None, None, None, *OTHER_HANDLERS.get(c, ()))]


@cache
def make_env(bfcl_dir: Path, category: str, reward: str, handler: str | None = None) -> FunctionCallingEnv:
    return FunctionCallingEnv(bfcl_dir / f"BFCL_v4_{category}.json", reward=reward, handler=handler)


def assert_step(env: FunctionCallingEnv, result) -> tuple[bool, bool]:
    obs, reward, terminated, truncated, info = result
    assert env.observation_space.contains(obs)
    assert type(reward) is float and math.isfinite(reward) and 0.0 <= reward <= 1.0, reward
    assert type(terminated) is bool and type(truncated) is bool
    assert type(info["valid"]) is bool
    assert all(0.0 <= value <= 1.0 for value in info["facets"].values()), info["facets"]
    assert len(info.get("results", ())) <= MAX_STEP_CALLS  # a step's calls are bounded
    return terminated, truncated


class CountingRenderer:
    """An env's renderer that records how many messages each rendering it does is given."""

    def __init__(self, inner):
        self.inner, self.sizes = inner, []

    def __call__(self, messages, *tools):
        self.sizes.append(len(messages))
        return self.inner(messages, *tools)

    def extend(self, rendered, messages, start, tools=None):
        self.sizes.append(len(messages) - start)
        return self.inner.extend(rendered, messages, start, tools)


def assert_bounded_rendering(env: FunctionCallingEnv, counting: CountingRenderer, before: int, result,
                             whole: bool) -> None:
    """Within a turn a step renders only its new messages; with ``whole``, the observation is
    also what rendering the whole chat gives."""
    episode = env._episode
    if "turn_valid" not in result[4]:
        assert counting.sizes == [len(episode.messages) - before], (counting.sizes, len(episode.messages) - before)
    if whole:
        assert result[0] == counting.inner(episode.messages, episode.tools)


FAMILIES = ("hermes", "llama_json", "mistral")


@cache
def make_fc_env(bfcl_dir: Path, category: str, family: str, reward: str) -> tuple[FunctionCallingEnv, CountingRenderer]:
    env = FunctionCallingEnv(bfcl_dir / f"BFCL_v4_{category}.json", reward=reward, tool_format=family)
    env.renderer = counting = CountingRenderer(env.renderer)
    return env, counting

