"""Users bring their own tool backends: registered in code or through the ``fcenv.backends``
entry-point group, usable in BFCL-format multi-turn tasks, judged by BFCL's rules."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fcenv.checkers.multi_turn import TurnRecord
from fcenv.checkers.result import CheckResult
from fcenv.env import FunctionCallingEnv

ROOT = Path(__file__).resolve().parents[2]

CALENDAR = '''
class CalendarAPI:
    """A calendar: events by id, and the next id to give."""

    FUNCTION_DOCS = [
        {"name": "add_event", "description": "Add an event on a day.",
         "parameters": {"type": "dict", "properties": {"title": {"type": "string", "description": "Title."},
                                                       "day": {"type": "integer", "description": "Day."}},
                        "required": ["title", "day"]}},
        {"name": "find_day", "description": "The day of an event.",
         "parameters": {"type": "dict", "properties": {"title": {"type": "string", "description": "Title."}},
                        "required": ["title"]}},
    ]

    def _load_scenario(self, scenario, long_context=False):
        self.events = dict(scenario.get("events", {}))

    def add_event(self, title, day):
        self.events[title] = day
        return {"added": title, "day": day}

    def find_day(self, title):
        return {"day": self.events[title]} if title in self.events else {"error": f"no event {title!r}"}
'''


def write_package(site: Path) -> None:
    """A package and its installed metadata, the way pip leaves them: importlib.metadata finds
    the entry point on sys.path without anything being installed."""
    (site / "mytools").mkdir(parents=True)
    (site / "mytools" / "__init__.py").write_text(CALENDAR)
    info = site / "mytools-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mytools\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fcenv.backends]\nCalendarAPI = mytools:CalendarAPI\n")


def write_tasks(folder: Path) -> Path:
    """A look-up-then-act task on the user's class; its id says nothing of multi-turn."""
    (folder / "possible_answer").mkdir(parents=True)
    entry = {"id": "calendar_0", "involved_classes": ["CalendarAPI"],
             "initial_config": {"CalendarAPI": {"events": {"standup": 3}}},
             "question": [[{"role": "user", "content": "Put a retro on the day of the standup."}]]}
    answer = {"id": "calendar_0", "ground_truth": [["find_day(title='standup')", "add_event(title='retro', day=3)"]]}
    (folder / "calendar.json").write_text(json.dumps(entry) + "\n")
    (folder / "possible_answer" / "calendar.json").write_text(json.dumps(answer) + "\n")
    return folder / "calendar.json"


def test_a_backend_from_an_entry_point_runs_a_multi_turn_task_end_to_end(tmp_path):
    site = tmp_path / "site"
    write_package(site)
    data = write_tasks(tmp_path / "data")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(site)!r})
        from fcenv.env import FunctionCallingEnv
        from fcenv.backends import known_backends

        assert "CalendarAPI" in known_backends()
        env = FunctionCallingEnv({str(data)!r}, reward="shaped")
        task = env.tasks[0]
        assert task.is_multi_turn and [f["name"] for f in task.functions] == ["add_event", "find_day"]
        env.reset(options={{"index": 0}})
        _, _, _, _, info = env.step("[find_day(title='standup')]")
        assert info["results"] == ['{{"day": 3}}'], info["results"]
        env.step("[add_event(title='retro', day=3)]")
        _, reward, terminated, _, info = env.step("Done.")
        assert terminated and info["valid"] and reward == 1.0, info["error_type"]
        env.reset(options={{"index": 0}})
        env.step("[add_event(title='retro', day=4)]")
        _, reward, _, _, info = env.step("Done.")
        assert not info["valid"] and info["error_type"] == "multi_turn:instance_state_mismatch" and reward < 1.0
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


def test_an_unknown_class_names_the_way_to_register_one(tmp_path):
    data = write_tasks(tmp_path / "data")
    from fcenv.data import DatasetError

    with pytest.raises(DatasetError, match=r"calendar.json, line 1, entry 'calendar_0', field 'involved_classes': "
                                           r"unknown classes \['CalendarAPI'\].*register_backend"):
        FunctionCallingEnv(data)


def test_a_checker_of_turn_records_applies_to_multi_turn_entries(bfcl_dir):
    seen: list[TurnRecord] = []

    def lenient(task, record: TurnRecord) -> CheckResult:
        seen.append(record)
        return CheckResult(record.model_calls > 0, None if record.model_calls else "no_calls", [], {"executed": 1.0})

    env = FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json", checker=lenient)
    env.reset(options={"id": "multi_turn_base_0"})
    turns = len(env.task.ground_truth)
    for _ in range(turns):
        env.step("[pwd()]")
        _, _, terminated, _, info = env.step("Done.")
    assert terminated and info["valid"] and len(seen) == turns
    assert seen[0].truth_calls == env.task.ground_truth[0] and seen[0].model_calls == 1
    with pytest.raises(ValueError, match="checker='ast' judges single-turn answers"):
        FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json", checker="ast")
