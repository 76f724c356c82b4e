"""FC mode (native tool calling): what a user of a Hermes, Llama or Mistral model relies on.
Chat templates in each family's style are written here (no downloads).

The tools reach the model through its chat template (no BFCL system prompt), its calls are
read in its family's format, tool results come back as ``tool`` messages carrying the call's
id, the family templates render exactly as Hugging Face's ``apply_chat_template`` does, a
trainer iteration runs in FC mode, and hostile text in any format stays a verdict.
"""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import fcenv
from fcenv.env import FunctionCallingEnv
from fcenv.prompts import hinted_functions
from fcenv.tool_formats import available_tool_formats, get_tool_format, template_renderer
from fcenv.handlers import Call

# A chat template in the Hermes/Qwen style, written for this test: tools listed in the system
# turn, calls shown back in <tool_call> blocks, results in <tool_response> blocks.
QWEN_STYLE_TEMPLATE = (
    "{%- if tools %}{{- '<|im_start|>system\\nTools:' }}"
    "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}{{- '<|im_start|>assistant\\n' + m.content }}"
    "{%- for c in m.tool_calls or [] %}{{- '<tool_call>\\n' + ({'name': c.function.name, "
    "'arguments': c.function.arguments} | tojson) + '\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}"
    "{%- elif m.role == 'tool' %}{{- '<|im_start|>user\\n<tool_response>\\n' + m.content "
    "+ '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


# Llama 3.1 style, written for this test: tools as JSON in the first user turn, calls as bare
# JSON objects, results in ipython turns.
LLAMA_STYLE_TEMPLATE = (
    "{{- '<|begin_of_text|>' }}{%- set ns = namespace(shown=false) %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' and tools and not ns.shown %}{%- set ns.shown = true %}"
    "{{- '<|start_header_id|>user<|end_header_id|>\\n\\nFunctions:\\n' }}"
    "{%- for tool in tools %}{{- (tool | tojson) + '\\n' }}{%- endfor %}{{- m.content + '<|eot_id|>' }}"
    "{%- elif m.role == 'assistant' and m.tool_calls %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- for c in m.tool_calls %}{{- ({'name': c.function.name, 'parameters': c.function.arguments} | tojson) }}"
    "{%- endfor %}{{- '<|eot_id|>' }}"
    "{%- elif m.role == 'tool' %}{{- '<|start_header_id|>ipython<|end_header_id|>\\n\\n' + m.content + '<|eot_id|>' }}"
    "{%- else %}{{- '<|start_header_id|>' + m.role + '<|end_header_id|>\\n\\n' + m.content + '<|eot_id|>' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}"
)

# Mistral style, written for this test: tools before the last user turn, calls after
# [TOOL_CALLS] with their ids, results in [TOOL_RESULTS] naming the call's id.
MISTRAL_STYLE_TEMPLATE = (
    "{{- '<s>' }}{%- set ns = namespace(last=-1) %}"
    "{%- for m in messages %}{%- if m.role == 'user' %}{%- set ns.last = loop.index0 %}{%- endif %}{%- endfor %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' %}"
    "{%- if tools and loop.index0 == ns.last %}{{- '[AVAILABLE_TOOLS]' + (tools | tojson) + '[/AVAILABLE_TOOLS]' }}"
    "{%- endif %}{{- '[INST]' + m.content + '[/INST]' }}"
    "{%- elif m.role == 'assistant' and m.tool_calls %}{{- '[TOOL_CALLS]' }}"
    "{%- for c in m.tool_calls %}{{- ({'name': c.function.name, 'arguments': c.function.arguments, 'id': c.id} | tojson) }}"
    "{%- endfor %}{{- '</s>' }}"
    "{%- elif m.role == 'tool' %}{{- '[TOOL_RESULTS]' + ({'content': m.content, 'call_id': m.tool_call_id} | tojson) "
    "+ '[/TOOL_RESULTS]' }}"
    "{%- else %}{{- m.content + '</s>' }}{%- endif %}"
    "{%- endfor %}"
)


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    tok.chat_template = QWEN_STYLE_TEMPLATE
    return tok


def test_tools_reach_the_models_template_and_no_bfcl_prompt_is_added(tokenizer):
    env = gym.make(fcenv.ENV_ID, dataset_path="tiny_eval", tool_format="hermes", renderer=tokenizer)
    observation, info = env.reset(options={"index": 0})
    task = env.unwrapped.task
    tools = hinted_functions(task.functions, task.language)
    assert info["tools"] == tools
    assert observation.startswith("<|im_start|>system\nTools:\n" + json.dumps(tools[0], ensure_ascii=False))
    assert "You are an expert in composing functions" not in observation
    assert observation.endswith(task.question[0][-1]["content"] + "<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize("family, template", [("llama_json", LLAMA_STYLE_TEMPLATE), ("mistral", MISTRAL_STYLE_TEMPLATE)])
def test_each_familys_own_template_renders_tools_calls_and_results(tiny_model, family, template):
    """A tokenizer whose template is in the family's style renders the chat the env keeps:
    the tools, the model's call shown back in the family's form, the result (with its call's
    id where the family uses ids)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    tok.chat_template = template
    env = gym.make(fcenv.ENV_ID, dataset_path="multi_turn_train", tool_format=family, renderer=tok)
    observation, info = env.reset(options={"index": 0})
    assert all(json.dumps(tool["name"]) in observation for tool in info["tools"])
    observation, _, _, _, info = env.step(get_tool_format(family).write([Call("add", {"a": 2, "b": 30})]))
    result = info["results"][0]
    if family == "mistral":
        assert '[TOOL_CALLS]{"name": "add", "arguments": {"a": 2, "b": 30}, "id": "call00000"}</s>' in observation
        assert "[TOOL_RESULTS]" + json.dumps({"content": result, "call_id": "call00000"}) in observation
    else:
        assert '{"name": "add", "parameters": {"a": 2, "b": 30}}<|eot_id|>' in observation
        assert "<|start_header_id|>ipython<|end_header_id|>\n\n" + result + "<|eot_id|>" in observation


def test_a_correct_answer_in_each_family_format_is_valid_and_prompting_syntax_is_not():
    for family in available_tool_formats():
        env = FunctionCallingEnv("tiny_eval", tool_format=family, order="sequential")
        env.reset(options={"index": 0})
        truth = env.task.ground_truth
        calls = [Call(name, {k: v[0] for k, v in args.items() if v[0] != ""}) for g in truth for name, args in g.items()]
        _, reward, _, _, info = env.step(get_tool_format(family).write(calls))
        assert info["valid"] and reward == 1.0, (family, info["error_type"])
        env.reset(options={"index": 0})
        prompting = "[" + ", ".join(f"{c.name}(" + ", ".join(f"{k}={v!r}" for k, v in c.arguments.items()) + ")"
                                    for c in calls) + "]"
        _, reward, _, _, info = env.step(prompting)
        assert not info["valid"] and reward == 0.0


def test_tool_results_come_back_as_tool_messages_with_the_calls_ids():
    env = FunctionCallingEnv("multi_turn_train", tool_format="mistral", order="sequential")
    env.reset(options={"index": 0})
    answer = '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 2, "b": 30}}, {"name": "add", "arguments": {"a": 1, "b": 1}}]'
    observation, _, terminated, _, info = env.step(answer)
    assert not terminated
    assistant, first, second = info["messages"][-3:]
    assert assistant["role"] == "assistant" and [c["id"] for c in assistant["tool_calls"]] == ["call00000", "call00001"]
    assert assistant["tool_calls"][0]["function"] == {"name": "add", "arguments": {"a": 2, "b": 30}}
    assert (first["role"], first["tool_call_id"], first["content"]) == ("tool", "call00000", info["results"][0])
    assert second["tool_call_id"] == "call00001"
    # Mistral's template shows each result with its call's id; ids go on counting in the episode.
    assert f'[TOOL_RESULTS] {{"content": {json.dumps(info["results"][0])}, "call_id": "call00000"}}[/TOOL_RESULTS]' \
        in observation
    _, _, _, _, info = env.step('[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3, "b": 4}}]')
    assert info["messages"][-1]["tool_call_id"] == "call00002"


def test_snapshots_keep_the_call_numbering():
    env = FunctionCallingEnv("multi_turn_train", tool_format="hermes", order="sequential")
    env.reset(options={"index": 0})
    env.step('<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>')
    snapshot = env.snapshot()
    _, _, _, _, after = env.step('<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>')
    env.restore(snapshot)
    _, _, _, _, again = env.step('<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>')
    assert again["messages"] == after["messages"] and again["messages"][-1]["tool_call_id"] == "call00001"


def test_an_answer_bfcl_cannot_write_back_fails_the_entry_as_bfcl_inference_does():
    """BFCL's Qwen handler writes every JSON block back into the next prompt: a block that is
    not a call breaks that, and the entry is recorded as an inference error."""
    env = FunctionCallingEnv("multi_turn_train", tool_format="hermes", order="sequential", reward="shaped")
    index = next(i for i, t in enumerate(env.tasks) if len(t.ground_truth) > 1)
    env.reset(options={"index": index})
    _, reward, terminated, _, info = env.step("<tool_call>\n[1, 2]\n</tool_call>")
    assert terminated and reward == 0.0
    assert (info["valid"], info["error_type"]) == (False, "multi_turn:inference_error")


@pytest.mark.parametrize("family", ["hermes", "llama_json", "mistral"])
def test_family_templates_render_as_hugging_face_does(tokenizer, family):
    """The env's default rendering (no tokenizer) equals ``apply_chat_template`` with the same
    template, so a model trained on one reads the other."""
    fmt = get_tool_format(family)
    env = FunctionCallingEnv("multi_turn_train", tool_format=family, order="sequential")
    env.reset(options={"index": 0})
    _, _, _, _, info = env.step(fmt.write([Call("add", {"a": 2, "b": 30})]))
    env.step("Done.")
    messages, tools = env.unwrapped._episode.messages, info["tools"]
    ours = template_renderer(fmt.chat_template)(messages, tools)
    theirs = tokenizer.apply_chat_template(messages, tools=tools, chat_template=fmt.chat_template, tokenize=False,
                                           add_generation_prompt=True)
    assert ours == theirs and '"add"' in ours
    result = info["results"][0]
    assert result in ours or json.dumps(result) in ours  # Mistral's template shows it as a JSON string


def test_bad_options_are_refused_before_any_episode():
    with pytest.raises(ValueError, match="unknown tool_format 'json'"):
        FunctionCallingEnv("tiny_eval", tool_format="json")
    with pytest.raises(ValueError, match="system_prompt has no place"):
        FunctionCallingEnv("tiny_eval", tool_format="hermes", system_prompt="{functions}")
    with pytest.raises(ValueError, match="leave handler out"):
        FunctionCallingEnv("tiny_eval", tool_format="hermes", handler="python")
    with pytest.raises(ValueError, match="with tool_format the renderer"):
        FunctionCallingEnv("tiny_eval", tool_format="hermes", renderer="chatml")


HOSTILE = [
    "<tool_call>\n" * 20000,
    "<tool_call>\n" + "[" * 50000 + "\n</tool_call>",
    '{"name": "f", "parameters": {"x": 9**9**9}}',
    '{"name": "f", "parameters": {"x": __import__("os").system("touch /tmp/fcenv_pwned")}}',
    "[TOOL_CALLS] " + "[" * 100000,
    '[TOOL_CALLS] [{"name": "f", "arguments": {"x": 1e999999}}]',
    "\x00" * 1000,
    "<|python_tag|>" * 10000 + ";" * 10000,
    '<tool_call>\n{"name": "add", "arguments": {"a": NaN, "b": Infinity}}\n</tool_call>',
]


@pytest.mark.parametrize("family", ["hermes", "llama_json", "mistral"])
def test_hostile_text_is_a_verdict_in_every_format(family):
    for data in ("tiny_eval", "multi_turn_train"):
        env = FunctionCallingEnv(data, tool_format=family, order="sequential")
        for text in HOSTILE:
            env.reset(options={"index": 0})
            _, reward, _, _, info = env.step(text)
            assert isinstance(info["valid"], bool) and 0.0 <= reward <= 1.0
    import os

    assert not os.path.exists("/tmp/fcenv_pwned")


def test_training_runs_in_fc_mode(tiny_model, tmp_path):
    """--tool_format: the warm-up writes the ground truth in the family's format, rollouts are
    rendered with the tools, and an iteration trains."""
    import math

    from fcenv.algos.config import parse_config
    from fcenv.algos.tiny.build import MULTI_TURN_TRAIN
    from fcenv.algos.training.loop import Runner

    config = parse_config(["--model_name_or_path", str(tiny_model), "--dataset_path", str(MULTI_TURN_TRAIN),
                           "--tool_format", "hermes", "--warmup_steps", "2", "--results_dir", str(tmp_path),
                           "--n_rollout_threads", "4", "--num_env_steps", "8", "--max_new_tokens", "16",
                           "--ppo_epoch", "1", "--num_mini_batch", "2", "--lora_r", "4", "--eval_interval", "0",
                           "--no-progress"])
    runner = Runner(config, log=lambda message: None)
    observation, info = runner.envs[0].reset(options={"index": 0})
    assert "<tools>" in observation and "tools" in info
    metrics = runner.train_iteration()
    assert math.isfinite(metrics["train/policy_loss"])
    saved = json.loads((runner.run_dir / "args.json").read_text())
    assert saved["tool_format"] == "hermes" and saved["resolved"]["tool_format"] == "hermes"


def test_training_flags_conflict_is_named(tmp_path, capsys):
    from fcenv.algos.train import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--tool_format", "hermes", "--system_prompt", "{functions}", "--results_dir", str(tmp_path)])
    assert exit_info.value.code == 2 and "--tool_format" in capsys.readouterr().err


def test_generate_and_evaluate_in_fc_mode(tiny_model, tmp_path):
    """`fcenv generate --tool_format` answers every turn with the tools in the template;
    `fcenv evaluate --tool_format` scores a family's answers as BFCL's FC handler does: the
    ground truth written in the family's format passes, and the same file read as prompting
    output does not."""
    from fcenv.data import load_tasks
    from fcenv.multi_turn.executor import parse_call_text
    from tests.support.runs import MULTI_TURN_EVAL
    from tests.support.runs import fcenv as run_fcenv

    done = run_fcenv("generate", "--model", str(tiny_model), "--tool_format", "mistral", "--data",
                     str(MULTI_TURN_EVAL), "--out", str(tmp_path), "--max_new_tokens", "16", "--greedy",
                     "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    tasks = load_tasks(str(MULTI_TURN_EVAL))
    lines = [json.loads(line) for line in (tmp_path / f"{MULTI_TURN_EVAL.stem}_result.json").read_text().splitlines()]
    assert [line["id"] for line in lines] == [t.id for t in tasks]
    assert all(len(line["result"]) == len(t.question) for line, t in zip(lines, tasks))

    fmt = get_tool_format("mistral")
    truth = tmp_path / "truth.json"
    truth.write_text("".join(json.dumps({"id": t.id, "result": [
        [fmt.write([Call(*(lambda name, args, kwargs: (name, kwargs))(*parse_call_text(c))) for c in calls]), "Done."]
        if calls else ["Done."] for calls in t.ground_truth]}) + "\n" for t in tasks))
    as_fc = run_fcenv("evaluate", "--data", str(MULTI_TURN_EVAL), "--results", str(truth), "--out",
                      str(tmp_path / "fc.jsonl"), "--tool_format", "mistral")
    assert as_fc.returncode == 0, as_fc.stderr
    verdicts = [json.loads(line) for line in (tmp_path / "fc.jsonl").read_text().splitlines()]
    assert len(verdicts) == len(tasks) and all(v["valid"] for v in verdicts)
    as_prompting = run_fcenv("evaluate", "--data", str(MULTI_TURN_EVAL), "--results", str(truth), "--out",
                             str(tmp_path / "prompting.jsonl"), "--compat", "bfcl")
    verdicts = [json.loads(line) for line in (tmp_path / "prompting.jsonl").read_text().splitlines()]
    assert as_prompting.returncode == 0 and not any(v["valid"] for v in verdicts)


def test_a_tool_chat_too_long_for_the_window_is_a_clear_error(tokenizer):
    """Cutting an FC chat keeps its tools; when even the latest message with them does not
    fit, the error says so (no template is asked to render an empty chat)."""
    from fcenv.algos.rollout.codec import ContextTooLong, TextCodec, chat_of

    env = gym.make(fcenv.ENV_ID, dataset_path="multi_turn_train", tool_format="llama_json", renderer=tokenizer)
    observation, info = env.reset(options={"index": 0})
    codec = TextCodec(tokenizer, 40, render=env.unwrapped.renderer)
    with pytest.raises(ContextTooLong, match="the latest message .* with the tools .* use a shorter set of tools"):
        codec.encode_counted(observation, chat_of(info), info["id"])
    roomy = TextCodec(tokenizer, 100_000, render=env.unwrapped.renderer)
    assert roomy.encode_counted(observation, chat_of(info))[1] is False


def test_an_endpoints_parsed_tool_calls_are_read_as_the_model_wrote_them():
    """`fcenv generate --endpoint --tool_format`: the chat goes out in the OpenAI shape
    (arguments as JSON strings), and tool calls a server returns parsed are written back in the
    family's format, which the env reads into the same calls."""
    from fcenv.algos.generate import api_messages, written_calls

    env = FunctionCallingEnv("multi_turn_train", tool_format="hermes", order="sequential")
    env.reset(options={"index": 0})
    _, _, _, _, info = env.step('<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 30}}\n</tool_call>')
    sent = api_messages(info["messages"])
    assert sent[-2]["tool_calls"][0]["function"]["arguments"] == '{"a": 2, "b": 30}'
    assert info["messages"][-2]["tool_calls"][0]["function"]["arguments"] == {"a": 2, "b": 30}  # not changed
    returned = [{"id": "x", "type": "function", "function": {"name": "multiply", "arguments": '{"a": 32, "b": 3}'}},
                {"id": "y", "type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 1}}}]
    for family in available_tool_formats():
        fmt = get_tool_format(family)
        assert fmt.calls(written_calls(fmt, returned)) == [Call("multiply", {"a": 32, "b": 3}), Call("add", {"a": 1, "b": 1})]
