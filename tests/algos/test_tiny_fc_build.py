"""The embedded tiny model's FC builds (native tool calling): its family's template with each
tool's signature on one line, the template's fixed text as single tokens, and a saved model that an
independent client (AutoTokenizer, apply_chat_template with tools=) sees exactly as the trainer
did. The prompting builds are untouched by all of it: their specs and cache keys stay as
published."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

pytest.importorskip("peft")
from transformers import AutoTokenizer

from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.tiny import teacher
from fcenv.algos.tiny.build import (
    CHAT_TEMPLATE,
    MULTI_TURN_TRAIN,
    PRE_TOKENIZER_PATTERN,
    TINY_SYSTEM_PROMPT,
    TINY_TRAIN,
    TinySpec,
    build_tiny,
    cache_key,
    code_of,
    model_template,
    template_pieces,
    tiny_spec,
    tokenizer_corpus,
)
from fcenv.env import FunctionCallingEnv
from fcenv.tool_formats import available_tool_formats, get_tool_format, template_renderer
from fcenv.handlers import Call

FAMILIES = ["hermes", "llama_json", "mistral"]
DOC = {"name": "book.flight", "description": "Book a flight.", "parameters": {"type": "dict", "required": ["to"],
       "properties": {"to": {"type": "string", "description": "Destination."},
                      "seat": {"type": "string", "description": "Seat class.", "enum": ["economy", "business"]},
                      "bags": {"type": "array", "items": {"type": "integer"}, "description": "Bag weights.",
                               "default": []}}}}


def test_the_prompting_builds_keep_their_specs_and_keys():
    """The fields FC builds added are left out of a prompting build's key, so the key is the
    published payload's: caches built before stay valid and the published figures stand."""
    published = {TINY_TRAIN: {"pretrain_steps": 1600, "demonstrations": 4, "habit_rate": 0.8},
                 MULTI_TURN_TRAIN: {"pretrain_steps": 2200, "demonstrations": 2, "habit_rate": 0.7}}
    common = {"vocab_size": 2048, "hidden_size": 128, "intermediate_size": 384, "num_layers": 4, "num_heads": 4,
              "num_kv_heads": 2, "max_positions": 1024, "pretrain_batch": 32, "pretrain_lr": 3e-3, "slip_rate": 0.3,
              "seed": 1234}
    for split, changes in published.items():
        spec = tiny_spec(split)
        fields = {**common, **changes}
        assert spec == TinySpec(**fields)
        corpus = tokenizer_corpus(split)
        payload = {"version": 5, "spec": fields, "prompt": TINY_SYSTEM_PROMPT,
                   "teacher": code_of(Path(teacher.__file__).read_text()), "template": CHAT_TEMPLATE,
                   "pre_tokenizer": PRE_TOKENIZER_PATTERN, "torch": torch.__version__.split("+")[0]}
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode())
        for text in corpus:
            digest.update(text.encode())
            digest.update(b"\0")
        assert cache_key(corpus, spec) == digest.hexdigest()[:16]
        assert model_template(spec) == CHAT_TEMPLATE


def test_the_key_covers_the_teachers_code_not_its_docs():
    """Editing the teacher's docstrings or comments keeps every cached build; a change to what
    it does builds afresh."""
    source = Path(teacher.__file__).read_text()
    redocumented = source.replace('"""', '"""Reworded. ', 1).replace("\ndef ", "\n# a new comment\ndef ", 1)
    assert redocumented != source and code_of(redocumented) == code_of(source)
    changed = source.replace("rng", "random_state")
    assert changed != source and code_of(changed) != code_of(source)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_tools_on_one_line_are_their_signatures(family):
    """Each tool's name, its parameters in order with their types, which are optional, and every
    constraint of their schemas; only the descriptions are left out."""
    spec = TinySpec(tool_format=family, compact_tools=True)
    shown = template_renderer(model_template(spec))([{"role": "user", "content": "Fly me to Oslo."}], [DOC])
    line = ('book.flight(to: string, seat?: string enum=[\\"economy\\", \\"business\\"], '
            'bags?: array items={\\"type\\": \\"integer\\"} default=[])')
    assert line in shown and "Fly me to Oslo." in shown
    assert "Book a flight." not in shown and "Seat class." not in shown
    # Everything else is the family's own template, as it is.
    family_prompt = template_renderer(get_tool_format(family).chat_template)([{"role": "user", "content": "Hi."}], None)
    assert template_renderer(model_template(spec))([{"role": "user", "content": "Hi."}], None) == family_prompt


@pytest.mark.parametrize("family", FAMILIES)
def test_template_pieces_are_the_templates_markup(family):
    pieces = template_pieces(get_tool_format(family).chat_template)
    assert pieces and all(len(p.strip()) >= 3 for p in pieces)
    marker = {"hermes": "<|im_start|>assistant\n", "llama_json": "<|eot_id|>", "mistral": "[TOOL_CALLS] ["}[family]
    assert marker in pieces
    assert not any(p.strip().isalnum() for p in pieces)  # words stay the BPE's, so questions tokenize as before


@pytest.fixture(scope="module")
def fc_model(tmp_path_factory) -> Path:
    """A small hermes FC build of the multi-turn split (the default's recipe, a few steps)."""
    torch.set_num_threads(1)
    spec = TinySpec(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2, num_kv_heads=1, pretrain_steps=20,
                    pretrain_batch=4, demonstrations=2, compact_tools=True, template_tokens=True, tool_format="hermes")
    return build_tiny(tmp_path_factory.mktemp("fc-cache"), spec, dataset_path=MULTI_TURN_TRAIN, log=lambda m: None)


def test_an_independent_client_sees_the_prompts_the_trainer_saw(fc_model):
    """AutoTokenizer and apply_chat_template(tools=...) on the saved model give the trainer's
    tokens for every step of the chat, the template's pieces single tokens, and the model's
    answers decode to the family's format."""
    ours = load_tokenizer(fc_model)
    auto = AutoTokenizer.from_pretrained(fc_model)
    fmt = get_tool_format("hermes")
    env = FunctionCallingEnv(str(MULTI_TURN_TRAIN), tool_format="hermes", renderer=ours, order="sequential")
    observation, info = env.reset(options={"index": 1})
    for calls in ([Call("get_user_id", {"user": "Grace"})], [Call("send_message", {"receiver_id": "USR384",
                                                                                    "message": "running late"})]):
        shown = auto.apply_chat_template(info["messages"], tools=info["tools"], tokenize=False, add_generation_prompt=True)
        assert shown == observation
        ids = ours(observation, add_special_tokens=False).input_ids
        assert auto(observation, add_special_tokens=False).input_ids == ids
        assert auto.decode(ids) == observation
        answer = fmt.write(calls)
        assert auto.decode(auto(answer, add_special_tokens=False).input_ids, skip_special_tokens=True) == answer
        observation, _, _, _, info = env.step(answer)
    pieces = template_pieces(model_template(TinySpec(tool_format="hermes", compact_tools=True)))
    assert all(len(auto(p, add_special_tokens=False).input_ids) == 1 for p in pieces)


def test_every_family_has_a_visible_habit_to_remove():
    """The teacher's habit, in FC mode, is an answer BFCL does not accept in every family: what
    RL can see and remove (here the prose answer, its calls in the prompting syntax)."""
    import random

    from fcenv.algos.model.warmup import ground_truth_steps, written_in
    from fcenv.algos.tiny.teacher import Teacher, teacher_step, value_pools
    from fcenv.data import load_tasks

    tasks = load_tasks(str(TINY_TRAIN))
    pools = value_pools(tasks)
    question = next(i for i, t in enumerate(tasks) if "?" in t.question[0][-1]["content"])
    always = Teacher(habit_rate=1.0, slip_rate=0.0)
    for family in available_tool_formats():
        env = FunctionCallingEnv(str(TINY_TRAIN), tool_format=family, reward="shaped")
        env.reset(options={"index": question})
        (step,) = ground_truth_steps(tasks[question])
        text = written_in(get_tool_format(family))(teacher_step(tasks[question], step, pools, random.Random(0), always))
        _, reward, _, _, info = env.step(text)
        assert not info["valid"] and reward < 1.0
        env.reset(options={"index": question})
        _, reward, _, _, info = env.step(written_in(get_tool_format(family))(step.text))
        assert info["valid"] and reward == 1.0
