"""Write the bundled multi-turn split for real models: ``multi_turn_varied_train.json`` and
``multi_turn_varied_eval.json`` (with ``possible_answer/``) in ``fcenv/bundled/``, and the
function docs they use in ``fcenv/bundled/multi_turn_func_doc/``.

Tasks in BFCL's multi-turn format on the package's backends of BFCL's classes (file system,
messaging, posting, tickets, trading, travel booking, vehicle control, math), one or two classes
per task, and only those classes' docs in the prompt (written in our words, shorter than BFCL's:
``func_docs.py``). Requests are invented (``skills.py``), in BFCL's four multi-turn kinds:

- ``base``: one to four user turns;
- ``miss_param``: one request leaves out a value only the user knows; the right move is to ask
  (that turn's answer is no call), and the user's next message gives it;
- ``miss_func``: a function a request needs is withheld until the next turn, where the env
  announces it; the turn that asked is answered without a call;
- ``long``: the classes' states are crowded (many files, messages, tweets, tickets, orders and
  cards), so results are long and the right item must be picked out.

Many tasks carry a value from one result into a later call (a user's id into a message, a found
file's folder into a cd, an order's id into its cancellation). The ground truth is run on the
backends as it is written, every call succeeding, and each entry is then played through the env
with its ground truth as the answer and judged by the multi-turn checker: an entry that fails is
a bug here and stops the script. Deterministic: ``python datasets/multi_turn/make_multi_turn_varied.py``.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path

from func_docs import write_func_docs
from skills import Request, class_pairs, skills_for, used_functions
from world import GenerationError, make_world

OUT = Path(__file__).resolve().parents[2] / "fcenv" / "bundled"
SEED = 20261128
KINDS = {"base": 4, "miss_param": 2, "miss_func": 2, "long": 2}
N_TRAIN = 1200
N_EVAL = 160
PREFIX = "multi_turn_varied"
ADDED_FUNCTIONS_TURN: list[dict] = []  # BFCL's question for the turn that announces withheld functions


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def draw_requests(rng: random.Random, classes: list[str], turns: int, crowded: bool):
    """``turns`` requests on a fresh world of ``classes``, each run as it is drawn."""
    world, config = make_world(rng, classes, crowded)
    skills = skills_for(classes)
    joint = [s for s in skills if len(s.classes) == 2]
    requests: list[Request] = []
    asked: list = []
    joined = False
    for turn in range(turns):
        # A two-class task asks at least once for something that needs both classes.
        # A skill asked once per task (a follow-up may come after its lead, never itself twice).
        pool = [s for s in (joint if joint and not joined and turn == turns - 1 else skills) if s not in asked]
        for _ in range(40):
            if not pool:
                break
            # Half the time, follow up on what an earlier turn left (the order placed, the file found).
            ready = [s for s in pool if s.follows in world.memory]
            chosen = rng.choice(ready if ready and rng.random() < 0.5 else pool)
            saved = copy.deepcopy((world.session, world.memory))
            try:
                request = chosen.fn(world)
            except GenerationError:
                world.session, world.memory = saved
                continue
            requests.append(request)
            asked.append(chosen)
            joined |= len(chosen.classes) == 2
            break
        else:
            raise GenerationError("no request fits this world")
    return config, requests


def task(rng: random.Random, kind: str) -> tuple[dict, list[list[str]]]:
    """One entry (without its id) and its ground truth."""
    classes = list(rng.choice(class_pairs()))
    rng.shuffle(classes)
    turns = rng.choice([1, 2, 2, 3, 3, 4]) if kind in ("base", "long") else rng.choice([2, 2, 3, 3])
    config, requests = draw_requests(rng, classes, turns, crowded=kind == "long")
    question = [_user(r.text) for r in requests]
    truth = [r.calls for r in requests]
    entry: dict = {"question": question, "initial_config": config, "involved_classes": classes}
    if kind == "miss_param":
        vague = [i for i, r in enumerate(requests) if r.vague]
        if not vague:
            raise GenerationError("nothing to leave out")
        i = rng.choice(vague)
        entry["question"] = question[:i] + [_user(requests[i].vague), _user(requests[i].clarify)] + question[i + 1:]
        truth = truth[:i] + [[], truth[i]] + truth[i + 1:]
    elif kind == "miss_func":
        seen: set[str] = set()
        options = []
        for i, request in enumerate(requests):
            fresh = [f for f in used_functions(request.calls) if f not in seen]
            if i and fresh:
                options.append((i, fresh))
            seen |= set(used_functions(request.calls))
        if not options:
            raise GenerationError("no function to withhold")
        i, fresh = rng.choice(options)
        withheld = fresh[-1]  # the request's own action, not a lookup on the way to it
        # Withheld functions must not be needed before they are announced.
        entry["question"] = question[:i + 1] + [ADDED_FUNCTIONS_TURN] + question[i + 1:]
        truth = truth[:i] + [[], truth[i]] + truth[i + 1:]
        entry["missed_function"] = {str(i + 1): [withheld]}
    return entry, truth


def build(count: int, rng: random.Random, avoid: set[str]) -> list[tuple[str, dict, list]]:
    """``count`` tasks, the kinds in KINDS' proportions, none whose questions repeat another's."""
    cycle = [kind for kind, weight in KINDS.items() for _ in range(weight)]
    out, seen = [], set(avoid)
    while len(out) < count:
        kind = cycle[len(out) % len(cycle)]
        try:
            entry, truth = task(rng, kind)
        except GenerationError:
            continue
        key = json.dumps(entry["question"])
        if key in seen:
            continue
        seen.add(key)
        out.append((kind, entry, truth))
    return out


def write(name: str, rows: list[tuple[str, dict, list]], counters: dict[str, int]) -> None:
    questions, answers = [], []
    for kind, entry, truth in rows:
        index = counters.get(kind, 0)
        counters[kind] = index + 1
        entry_id = f"{PREFIX}_{kind}_{index}"
        questions.append({"id": entry_id, **entry})
        answers.append({"id": entry_id, "ground_truth": truth})
    (OUT / "possible_answer").mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text("".join(json.dumps(q) + "\n" for q in questions))
    (OUT / "possible_answer" / name).write_text("".join(json.dumps(a) + "\n" for a in answers))


def main() -> None:
    write_func_docs(OUT / "multi_turn_func_doc")
    rng = random.Random(SEED)
    eval_rows = build(N_EVAL, rng, set())
    train_rows = build(N_TRAIN, rng, {json.dumps(e["question"]) for _, e, _ in eval_rows})
    counters: dict[str, int] = {}
    write(f"{PREFIX}_eval.json", eval_rows, counters)
    write(f"{PREFIX}_train.json", train_rows, counters)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from check_split import check_split  # the env and checker judge each entry's ground truth
    for name in (f"{PREFIX}_eval.json", f"{PREFIX}_train.json"):
        check_split(OUT / name)


if __name__ == "__main__":
    main()
