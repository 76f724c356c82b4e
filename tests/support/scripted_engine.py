"""A rollout engine that plays given action texts, whatever the context: the model's part of
an episode, scripted, so that a test knows how the chat grows (the env, the codec and the
rollout loop under test stay real)."""

from __future__ import annotations

from fcenv.algos.rollout.engine import Samples


class ScriptedEngine:
    exact_logprobs = True

    def __init__(self, tokenizer, stop_id: int, texts: list[str], fallback: str = "Done."):
        self.stop_ids = [stop_id]
        self.tokenizer = tokenizer
        self.texts = list(texts)
        self.fallback = fallback  # once the script is spent: a plain answer, which ends a turn

    def sample(self, contexts, max_new_tokens, *, generator=None, greedy=False, entropy_tokens=0) -> Samples:
        actions = []
        for _ in contexts:
            text = self.texts.pop(0) if self.texts else self.fallback
            actions.append(self.tokenizer(text, add_special_tokens=False).input_ids[:max_new_tokens - 1]
                           + self.stop_ids)
        return Samples(actions, [[0.0] * len(a) for a in actions], [0.0] * len(actions))

    def sync(self, policy) -> None:
        pass

    def close(self) -> None:
        pass
