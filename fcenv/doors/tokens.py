"""An episode as one token sequence, for trainers that train on token ids (TRL's
``rollout_func``, verl's agent loop).

The prompt is the task's first chat rendered by the model's chat template. After it, the
completion holds the model's sampled tokens exactly as sampled (``mask`` 1) and, between them,
the env's tokens (``mask`` 0): the rest of the template's rendering of the env's messages (tool
results, the next user turn) up to the next generation prompt. The model samples each step from
this very sequence, so the tokens a trainer computes log-probs on are the tokens that were
sampled, in the context they were sampled in; nothing is decoded and encoded again.
"""

from __future__ import annotations

from fcenv.doors.core import Episode, Step

# A stand-in chat, for templates that render the env's new messages differently once earlier
# messages are in place: the new messages are then rendered after it instead.
_STAND_IN = [{"role": "user", "content": "x"}]


class ChatTemplate:
    """A tokenizer's chat template over an episode's messages (with the tools in FC mode; a
    tokenizer whose template does not render tools uses the family's, as the env does)."""

    def __init__(self, tokenizer, fallback_template: str | None = None):
        self.tokenizer = tokenizer
        own = getattr(tokenizer, "chat_template", None)
        self.tool_template = own if isinstance(own, str) and "tools" in own else fallback_template
        eos = tokenizer.eos_token
        self.eos_text = eos if isinstance(eos, str) and eos else None
        self.eos_id = tokenizer.eos_token_id

    def text(self, messages: list[dict], tools: list[dict] | None, generation_prompt: bool) -> str:
        if tools is None:
            return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                      add_generation_prompt=generation_prompt)
        return self.tokenizer.apply_chat_template(messages, tools=tools, chat_template=self.tool_template,
                                                  tokenize=False, add_generation_prompt=generation_prompt)

    def ids(self, text: str) -> list[int]:
        # The template wrote every special token already.
        return list(self.tokenizer(text, add_special_tokens=False).input_ids)

    def env_text(self, chat: list[dict], added: list[dict], tools: list[dict] | None) -> tuple[str, bool]:
        """What the template writes after the model's message (the last of ``chat``) until the
        next generation prompt, ``added`` in between; and whether it starts after the message's
        end-of-turn token (True) or after the message itself (False, a template that does not
        close messages with it)."""
        for before in (chat, _STAND_IN + chat[-1:]):
            closed = self.text(before, tools, generation_prompt=False)
            full = self.text(before + added, tools, generation_prompt=True)
            if not full.startswith(closed):
                continue
            # Cut after the message's end-of-turn token: the model sampled that one itself.
            opened = self.text(before[:-1], tools, generation_prompt=True)
            end = closed.rfind(self.eos_text) if self.eos_text else -1
            if end >= len(opened) and closed.startswith(opened):
                return full[end + len(self.eos_text):], True
            return full[len(closed):], False
        raise ValueError("the chat template renders earlier messages differently once the env's messages follow "
                         "them, so the env's tokens cannot be appended to the sampled ones")


class TokenEpisode:
    """An episode played token by token: ``context`` is what the model samples the next step
    from; ``add(action_ids, logprobs)`` takes its sampled tokens, steps the env with their text
    and appends the env's tokens. ``budget`` bounds the completion (sampled and env tokens)."""

    def __init__(self, episode: Episode, template: ChatTemplate, budget: int):
        self.episode = episode
        self.template = template
        self.prompt_ids = template.ids(template.text(episode.messages, episode.tools, generation_prompt=True))
        self.completion_ids: list[int] = []
        self.mask: list[int] = []  # 1: sampled by the model, 0: written by the env
        self.logprobs: list[float] = []
        self.budget = budget
        self.actions = 0

    @property
    def done(self) -> bool:
        return self.episode.done

    @property
    def context(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    @property
    def room(self) -> int:
        """Tokens left in the budget."""
        return self.budget - len(self.completion_ids)

    def add(self, action_ids: list[int], logprobs: list[float] | None = None) -> Step:
        """The model's sampled tokens for one step (ending with the end-of-turn token unless
        cut by the length limit). Its text is stepped; if the episode goes on, the env's tokens
        follow, and when they no longer fit the budget the episode is finished without the
        model (``Episode.finish``)."""
        action_ids = list(action_ids)[: max(self.room, 0)]
        self.completion_ids += action_ids
        self.mask += [1] * len(action_ids)
        self.logprobs += list(logprobs[: len(action_ids)]) if logprobs is not None else [0.0] * len(action_ids)
        self.actions += 1
        text = self.template.tokenizer.decode(action_ids, skip_special_tokens=True)
        step = self.episode.step(text)
        if step.done:
            return step
        chat = self.episode.messages[: len(self.episode.messages) - len(step.messages)]
        suffix, after_end = self.template.env_text(chat, step.messages, self.episode.tools)
        env_ids = self.template.ids(suffix)
        closed = bool(action_ids) and action_ids[-1] == self.template.eos_id
        if after_end and not closed and self.template.eos_id is not None:
            env_ids = [self.template.eos_id] + env_ids  # the message was cut: the env closes it
        if len(env_ids) >= self.room:  # no room left to answer in
            self.episode.finish()
            return step
        self.completion_ids += env_ids
        self.mask += [0] * len(env_ids)
        self.logprobs += [0.0] * len(env_ids)
        return step

    def finish(self) -> None:
        """Ends the episode without the model (its budget or step limit ran out)."""
        self.episode.finish()
