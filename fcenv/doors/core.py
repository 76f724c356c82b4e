"""One fcenv episode as a conversation: the chat so far, the tools, and ``step(text)``.

This is what every trainer's door (TRL, SkyRL-gym, verl) needs from fcenv: the messages a
model is shown, the tools (FC mode), and for each answer the env's messages that follow it (tool
results, the next user turn, multi_turn_miss_func's announcement), the reward and whether the
episode is over. Web-search entries are served like multi-turn ones (give ``web_search``, the
env's search source); memory entries, a chain of chats, are refused. The verdicts are the env's: BFCL's, with its rewards (``bfcl``, ``shaped``,
``steps`` or a callable). Each door only translates this to its framework's types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcenv.env import FunctionCallingEnv

# The doors render with the trainer's tokenizer, from the messages: the env's own rendering
# of each observation would be work thrown away.
_NO_TEXT = lambda *chat: ""  # noqa: E731


def make_env(dataset_path: str | Path, **options: Any) -> FunctionCallingEnv:
    """The env the doors step: ``options`` are ``FunctionCallingEnv``'s (reward, tool_format,
    system_prompt, handler, checker, backend_package, max_steps_per_turn, ...). A renderer given
    here is ignored, since the doors render the messages themselves."""
    options.pop("renderer", None)
    return FunctionCallingEnv(dataset_path=str(dataset_path), renderer=_NO_TEXT, **options)


@dataclass
class Step:
    """What the env answered to one model message.

    ``messages``: the env's messages that follow the model's (tool results, then any next user
    turn or announcement); empty when the episode is over. ``reward``: this step's reward (a
    multi-turn entry may pay at each turn's end, or with ``steps`` at each step). ``info``: the
    env's step info (``valid``, ``error_type``, ``facets``, ``calls``, ...).
    """

    messages: list[dict[str, Any]]
    reward: float
    done: bool
    truncated: bool
    info: dict[str, Any] = field(repr=False)


class Episode:
    """One task of an env played as a chat.

    ``messages`` is the chat so far, starting with the task's first prompt (prompting mode: the
    system prompt with the docs, then the user's request; FC mode: the user's request, with the
    docs in ``tools``). ``step(text)`` takes the model's whole answer for one step.
    """

    def __init__(self, env: FunctionCallingEnv, *, index: int | None = None, task_id: str | None = None):
        if (index is None) == (task_id is None):
            raise ValueError("give exactly one of index and task_id")
        _, info = env.reset(options={"index": index} if task_id is None else {"id": task_id})
        self.env = env
        self.task = env.task
        if self.task.kind == "agentic" and self.task.prerequisites:
            # A memory episode is several chats (fcenv.agentic.episode); a door plays one, which
            # grows by the env's messages. A web-search episode is one chat: the doors serve it.
            raise ValueError(f"entry {self.task.id}: a memory episode is a chain of conversations, each a chat of "
                             f"its own; the trainers' doors play one chat per episode (train on memory entries with "
                             f"`fcenv train`, or step FunctionCallingEnv)")
        self.messages: list[dict[str, Any]] = info["messages"]
        self.tools: list[dict[str, Any]] | None = info.get("tools")
        self.reward = 0.0  # summed over the steps so far
        self.steps = 0
        self.done = False
        self.info: dict[str, Any] = {}

    @property
    def valid(self) -> bool:
        """BFCL's verdict for the entry (False until the episode is over)."""
        return bool(self.done and self.info.get("valid"))

    def step(self, text: str) -> Step:
        """The model's answer; the env's messages after it, the reward and whether it is over.
        The assistant message the env records for it is ``messages[-len(step.messages) - 1]``."""
        if self.done:
            raise RuntimeError(f"entry {self.task.id}: the episode is over")
        before = len(self.messages)
        _, reward, terminated, truncated, info = self.env.step(text)
        self.messages = info["messages"]
        self.reward += float(reward)
        self.steps += 1
        self.done = bool(terminated or truncated)
        self.info = info
        # messages[before] is the assistant's (as the env records it: FC mode writes the calls).
        return Step(messages=self.messages[before + 1:], reward=float(reward), done=self.done,
                    truncated=bool(truncated), info=info)

    def finish(self) -> list[Step]:
        """Ends the episode where the model stopped answering (a token or turn budget ran out):
        every step left is answered with nothing, which ends each remaining turn without calls,
        so the verdict is BFCL's for what the model did."""
        steps = []
        while not self.done:
            steps.append(self.step(""))
        return steps

    def summary(self) -> dict[str, Any]:
        """The episode's outcome for logs: id, BFCL's verdict, error type, reward, steps."""
        return {"id": self.task.id, "valid": self.valid, "error_type": self.info.get("error_type"),
                "reward": self.reward, "steps": self.steps}
