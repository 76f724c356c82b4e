"""The fuzz suite's inputs without pytest: exceptions and per-call time for every target.

Run: ``python -m bench.bench_fuzz [--inputs 100500] [--bfcl_dir DIR]``.

Generates the inputs of tests/fuzz/test_fuzz.py and tests/fuzz/test_fuzz_env.py with the same
strategies (harness/strategies.py, derandomized: the same inputs on every run; ``--inputs``
scales every group alike, and the default is the tests' own count) and feeds them to:

- every registered decoder, called directly and through ``fcenv.handlers.decode``;
- every single-turn checker on decoded calls for single-turn tasks, the multi-turn checker
  on recorded trajectories;
- ``env.step`` of single-turn envs (one per category family, both rewards) and of
  multi-turn episodes (several fuzzed steps each, often to the end, sometimes with a step of
  very many calls); of FC multi-turn episodes (the three families' formats), where a step
  must also render only its new messages within a turn; and of multi-turn episodes on a
  user's hostile tool backend (harness/hostile_tools.py: tools that exit, raise
  ``BaseException`` subclasses, hold state ``!=`` cannot compare).

Each call is timed alone. Prints, per target: calls, exceptions (anything but a
``DecodeError`` from a decoder), property violations (the tests' assertions: a wrong return
type, a facet or reward outside [0, 1], ...), and mean, p99 and max time per call, with the
slowest call of each decoder and checker timed again on its own. The run
works in an empty temporary folder and reports whether any file appeared there (injected
code that ran). Exits 1 on any exception, violation or file.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fcenv.checkers import available_checkers, get_checker
from fcenv.bfcl_data import DEFAULT_DIR as BFCL_DEFAULT_DIR
from fcenv.multi_turn.trajectory import check_recorded
from fcenv.handlers import DecodeError, available_handlers, decode, get_handler
from harness.fuzz_properties import (
    FAMILIES,
    MULTI_TURN,
    REWARDS,
    SINGLE_TURN,
    assert_bounded_rendering,
    assert_check_result,
    assert_decoded,
    assert_step,
    env_choices,
    make_env,
    make_fc_env,
    multi_turn_case,
    single_turn_case,
)
from harness.strategies import (
    Choices,
    fuzz_for,
    fuzz_settings,
    json_text,
    model_text,
    python_text,
    random_text,
    source_text,
    task_text,
    tool_call_text,
)
from harness.strategies_multi_turn import episode_texts, in_family

ROOT = Path(__file__).resolve().parents[1]

# Examples per group in the test suite; --inputs scales them.
GROUPS = {"python text": 20_000, "java/javascript text": 12_000, "json/tool_call text": 12_000, "any text": 20_000,
          "single-turn checker cases": 16_000, "multi-turn checker cases": 2_000, "single-turn env steps": 16_000,
          "multi-turn episodes": 2_500, "FC multi-turn episodes": 600, "hostile-tool episodes": 600}


SLOW_SECONDS = 0.05  # a slowest call above this, timed again, has its input printed


class Recorder:
    """Per-target call times, exceptions and property violations, and each target's slowest
    call (to time it again alone: a single slow call may be a garbage collection or another
    process on the machine rather than the input)."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.exceptions: dict[str, list[str]] = defaultdict(list)
        self.violations: dict[str, list[str]] = defaultdict(list)
        self.slowest: dict[str, tuple[float, Callable[..., Any], tuple, dict]] = {}

    def _timed(self, target: str, seconds: float, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        self.times[target].append(seconds)
        if seconds > self.slowest.get(target, (0.0,))[0]:
            self.slowest[target] = (seconds, fn, args, kwargs)

    def retime_slowest(self, target: str, repeat: int = 3) -> float | None:
        """The slowest call's best time over ``repeat`` runs, garbage collection off; None for
        calls on an env, whose state has moved on."""
        _, fn, args, kwargs = self.slowest[target]
        if target.startswith("env."):
            return None
        best = float("inf")
        gc.disable()
        try:
            for _ in range(repeat):
                start = time.perf_counter()
                with contextlib.suppress(Exception):  # already counted
                    fn(*args, **kwargs)
                best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
        return best

    def call(self, target: str, fn: Callable[..., Any], *args: Any, allowed: tuple[type, ...] = (),
             **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, timed; an exception not in ``allowed`` is recorded and gives None."""
        start = time.perf_counter()
        try:
            value = fn(*args, **kwargs)
        except allowed as exc:
            value = exc
        except Exception as exc:  # noqa: BLE001  (what the bench is looking for)
            self._timed(target, time.perf_counter() - start, fn, args, kwargs)
            self.exceptions[target].append(f"{type(exc).__name__}: {str(exc)[:200]}")
            return None
        self._timed(target, time.perf_counter() - start, fn, args, kwargs)
        return value

    def check(self, target: str, assertion: Callable[..., None], *args: Any, example: Any = None) -> None:
        try:
            assertion(*args)
        except AssertionError as exc:
            self.violations[target].append(f"{str(exc)[:200]} on {repr(example)[:300]}")


def run_group(examples: int, strategy: st.SearchStrategy, body: Callable[[Any], None]) -> None:
    @fuzz_settings(examples)
    @given(strategy)
    def property_runs(value):
        body(value)

    property_runs()


def decoders(rec: Recorder, text: str) -> None:
    for name in available_handlers():
        for target, fn, args in ((f"decoder {name}", get_handler(name), (text,)),
                                 (f"decode(text, {name!r})", decode, (text, name))):
            value = rec.call(target, fn, *args, allowed=(DecodeError,))
            if value is not None:
                rec.check(target, assert_decoded, value, example=text)


def single_turn_checkers(rec: Recorder, case) -> None:
    task, decoded = case
    for name in available_checkers():
        if name != "multi_turn":
            result = rec.call(f"checker {name}", get_checker(name), task, decoded)
            if result is not None:
                rec.check(f"checker {name}", assert_check_result, result, name == "ast", example=case)


def check_with_facets(task, decoded):
    """The multi-turn verdict with its facets, which are computed lazily (a reward asks for them)."""
    result = check_recorded(task, decoded)
    dict(result.facets)
    return result


def multi_turn_checker(rec: Recorder, case) -> None:
    result = rec.call("checker multi_turn", check_with_facets, *case)
    if result is not None:
        rec.check("checker multi_turn", assert_check_result, result, example=case)


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=sum(GROUPS.values()), help="generated inputs in all")
    parser.add_argument("--bfcl_dir", type=Path, default=None, metavar="DIR",
                        help="BFCL's data (default: the first of ../shared/bfcl, datasets/bfcl and "
                             "~/.cache/fcenv/bfcl that holds it)")
    parser.add_argument("--only", default="", help="run only the input groups whose name contains this")
    args = parser.parse_args()
    bfcl_dir = args.bfcl_dir or next(p for p in (ROOT.parent / "shared" / "bfcl", ROOT / "datasets" / "bfcl", BFCL_DEFAULT_DIR)
                                     if (p / "BFCL_v4_simple_python.json").exists())
    bfcl_dir = bfcl_dir.resolve()
    scale = args.inputs / sum(GROUPS.values())
    counts = {name: max(1, round(n * scale)) for name, n in GROUPS.items()}
    fuzz = fuzz_for(bfcl_dir)
    rec = Recorder()
    episode_steps = [0]

    def env_step(env, text: str, target: str):
        result = rec.call(target, env.step, text)
        if result is not None:
            rec.check(target, assert_step, env, result, example=text)
        return result

    def single_turn_env(data) -> None:
        r = Choices(data.draw)
        env = make_env(bfcl_dir, *r.draw(single_envs))
        rec.call("env.reset single-turn", env.reset, options={"index": r.number(0, len(env.tasks) - 1)})
        env_step(env, task_text(r, fuzz, env.task), "env.step single-turn")

    def multi_turn_env(data) -> None:
        r = Choices(data.draw)
        env = make_env(bfcl_dir, *r.draw(multi_envs))
        rec.call("env.reset multi-turn", env.reset, options={"index": r.number(0, len(env.tasks) - 1)})
        texts = episode_texts(r, fuzz, env.task)
        for text in texts:
            result = env_step(env, text, "env.step multi-turn")
            episode_steps[0] += 1
            if result is None or result[2] or result[3]:
                break

    def fc_multi_turn_env(data) -> None:
        r = Choices(data.draw)
        category, family, reward = r.draw(fc_envs)
        env, counting = make_fc_env(bfcl_dir, category, family, reward)
        rec.call("env.reset FC multi-turn", env.reset, options={"index": r.number(0, len(env.tasks) - 1)})
        whole = r.one_in(4)
        for text in (in_family(r, family, t) for t in episode_texts(r, fuzz, env.task)):
            before = len(env._episode.messages)
            counting.sizes.clear()
            result = env_step(env, text, "env.step FC multi-turn")
            episode_steps[0] += 1
            if result is None:
                break
            rec.check("env.step FC multi-turn", assert_bounded_rendering, env, counting, before, result, whole,
                      example=text[:300])
            if result[2] or result[3]:
                break

    def hostile_tool_env(data) -> None:
        r = Choices(data.draw)
        rec.call("env.reset hostile tools", hostile.reset, options={"index": r.number(0, len(hostile.tasks) - 1)})
        for text in episode_texts(r, fuzz, hostile.task):
            result = env_step(hostile, text, "env.step hostile tools")
            episode_steps[0] += 1
            if result is None or result[2] or result[3]:
                break

    from fcenv.env import FunctionCallingEnv
    from harness.hostile_tools import write_tasks

    hostile_data = tempfile.TemporaryDirectory(prefix="hostile-tools-")  # removed when the bench ends
    hostile = FunctionCallingEnv(write_tasks(Path(hostile_data.name)), reward="shaped")
    fc_envs = st.sampled_from([(c, f, r) for c in MULTI_TURN for f in FAMILIES for r in REWARDS])
    single_envs = st.sampled_from(env_choices(SINGLE_TURN))
    multi_envs = st.sampled_from(env_choices(MULTI_TURN))
    groups = {
        "python text": (fuzz.strategy(python_text), lambda t: decoders(rec, t)),
        "java/javascript text": (fuzz.strategy(source_text, "java") | fuzz.strategy(source_text, "javascript"),
                                 lambda t: decoders(rec, t)),
        "json/tool_call text": (fuzz.strategy(json_text) | fuzz.strategy(tool_call_text), lambda t: decoders(rec, t)),
        "any text": (fuzz.strategy(model_text) | random_text, lambda t: decoders(rec, t)),
        "single-turn checker cases": (fuzz.strategy(single_turn_case), lambda c: single_turn_checkers(rec, c)),
        "multi-turn checker cases": (fuzz.strategy(multi_turn_case), lambda c: multi_turn_checker(rec, c)),
        "single-turn env steps": (st.data(), single_turn_env),
        "multi-turn episodes": (st.data(), multi_turn_env),
        "FC multi-turn episodes": (st.data(), fc_multi_turn_env),
        "hostile-tool episodes": (st.data(), hostile_tool_env),
    }
    home = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            print(f"{'input group':28}{'inputs':>8}{'seconds':>9}")
            for name, (strategy, body) in groups.items():
                if args.only not in name:
                    continue
                start = time.perf_counter()
                run_group(counts[name], strategy, body)
                print(f"{name:28}{counts[name]:>8}{time.perf_counter() - start:>9.1f}")
            created = sorted(os.listdir(folder))
        finally:
            os.chdir(home)
    total = sum(n for name, n in counts.items() if args.only in name)
    print(f"{'total':28}{total:>8}   (+ {episode_steps[0]} multi-turn steps in the episodes)\n")

    print(f"{'target':26}{'calls':>8}{'exceptions':>11}{'violations':>11}{'mean us':>9}{'p99 us':>9}{'max ms':>8}"
          f"{'max again':>10}")
    for target in sorted(rec.times):
        times = sorted(rec.times[target])
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        again = rec.retime_slowest(target)
        print(f"{target:26}{len(times):>8}{len(rec.exceptions[target]):>11}{len(rec.violations[target]):>11}"
              f"{sum(times) / len(times) * 1e6:>9.1f}{p99 * 1e6:>9.1f}{times[-1] * 1e3:>8.2f}"
              f"{'-' if again is None else f'{again * 1e3:.2f}':>10}")
    print("(max again: the slowest call timed alone, best of 3, garbage collection off; '-' for env calls)")
    for target, (_, fn, call_args, _) in sorted(rec.slowest.items()):
        again = rec.retime_slowest(target, repeat=1)
        if again is not None and again > SLOW_SECONDS:
            shown = [a.id if hasattr(a, "id") else a for a in call_args]  # a task by its id
            print(f"  slow input for {target} ({again * 1e3:.0f} ms): {repr(shown)[:400]}")
    exceptions = sum(map(len, rec.exceptions.values()))
    violations = sum(map(len, rec.violations.values()))
    print(f"\nexceptions: {exceptions}, property violations: {violations}, files created by model text: {len(created)}")
    for kind, found in (("exception", rec.exceptions), ("violation", rec.violations)):
        for target, messages in found.items():
            for message in messages[:3]:
                print(f"  {kind} in {target}: {message}")
    return 1 if exceptions or violations or created else 0


if __name__ == "__main__":
    sys.exit(main())
