"""Our side of a multi-turn trajectory in the oracle's answer shape: decode every step, judge the
trajectory, run the calls on our backends; the verdict, the decoded call strings, every result
string and each class's public state after every turn."""

from __future__ import annotations

from fcenv.multi_turn.executor import ToolSession, call_text, decode_step
from fcenv.multi_turn.trajectory import check_recorded
from harness.oracle.state import public_state


def replay(task, turns: list[list[str]]) -> dict:
    decoded = [[decode_step(text) for text in steps] for steps in turns]
    verdict = check_recorded(task, decoded)
    session = ToolSession.for_task(task)
    results, states = [], []
    for steps in decoded:
        for calls in steps:
            if calls:
                results.append([session.execute(c) for c in calls])
        states.append({name: public_state(inst) for name, inst in session.instances.items()})
    return {
        "valid": verdict.valid,
        "error_type": verdict.error_type,
        "decoded": [[[call_text(c.name, c.arguments) for c in calls] for calls in steps if calls] for steps in decoded],
        "results": results,
        "states": states,
    }
