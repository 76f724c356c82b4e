"""The embedded default model: a tiny Llama-shaped LM and its tokenizer, built offline.

Nothing is downloaded. The tokenizer is a byte-level BPE trained with ``tokenizers`` on the
bundled dataset's prompts and answers; the model is a Llama config built in code, then given
a short supervised pretraining on the bundled training split's ground truth so that it is
partly right before RL starts. Both are cached (``~/.cache/fcenv/models/tiny-<key>/``
by default) under a key that covers every input, so a second run loads them in
a second and any change to the data, prompt or settings builds afresh. The build is
deterministic: fixed seeds, a fixed data order.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from fcenv.bundled import BUNDLED, resolve

TINY_TRAIN = BUNDLED["tiny_train"]
TINY_EVAL = BUNDLED["tiny_eval"]
MULTI_TURN_TRAIN = BUNDLED["multi_turn_train"]
MULTI_TURN_EVAL = BUNDLED["multi_turn_eval"]
# The bundled training splits, each with its held-out split.
BUNDLED_EVAL = {TINY_TRAIN: TINY_EVAL, MULTI_TURN_TRAIN: MULTI_TURN_EVAL}
# Built models are cached per user, like Hugging Face's hub cache: one build serves every
# checkout and install on the machine (the key covers the spec and the data).
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "fcenv" / "models"
TINY_MODEL_NAME = "tiny-llama"
BUILD_VERSION = 5
BUILD_THREADS = 2
# Llama, not Qwen2: transformers 5's AutoTokenizer replaces the pipeline of a "qwen2" checkpoint
# with Qwen2's own (its pre-tokenizer regex), which silently tokenizes our texts differently;
# for "llama" it loads the saved tokenizer.json as it is, so the saved model loads the
# standard way (tests/algos/test_tiny_model.py checks it).

# The tiny model's prompt leaves out the JSON function docs (there is no "{functions}"):
# at ~100 tokens per function they would be four fifths of every context, and a model of a
# million parameters on two CPU cores learns the bundled functions from the data instead.
# Every other model gets BFCL's full prompt with the docs.
TINY_SYSTEM_PROMPT = "Answer with function calls, like [f(x=1)]."
END, PAD = "<|end|>", "<|pad|>"
PRE_TOKENIZER_PATTERN = r"\s?[\p{L}_]+|\p{N}|[^\p{L}\p{N}_]+"
SPECIAL_TOKENS = [END, PAD, "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)


@dataclass(frozen=True)
class TinySpec:
    vocab_size: int = 2048
    hidden_size: int = 128
    intermediate_size: int = 384
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    max_positions: int = 1024
    pretrain_steps: int = 1600
    pretrain_batch: int = 32
    pretrain_lr: float = 3e-3
    demonstrations: int = 4  # the imperfect teacher's answers per training prompt (algos/tiny/teacher.py)
    habit_rate: float = 0.8
    slip_rate: float = 0.3
    seed: int = 1234
    # Native tool calling (fcenv.tool_formats): prompts with the tools through the family's chat
    # template, demonstrations written in its format. "" is BFCL's prompting format.
    tool_format: str = ""
    # Batches of whole demonstration groups (every demonstration of a prompt), each prompt run
    # once for all of them: pretrain_batch then counts prompts. FC prompts carry the tool docs
    # and are 4 to 8 times as long as the tiny prompting prompt.
    share_contexts: bool = False
    # FC builds: each tool's signature on one line (TOOLS_ON_ONE_LINE) in the family's template, and
    # the template's fixed text as single tokens (template_pieces): a prompt a few tokens longer
    # than the prompting prompt.
    compact_tools: bool = False
    template_tokens: bool = False


# Fields added after the prompting builds were published: a build's cache key names them only
# when they are set, so the keys (and caches) of the builds that do not use them stay as they were.
LATER_FIELDS = {"tool_format": "", "share_contexts": False, "compact_tools": False, "template_tokens": False}

# The tiny FC model's tools, shown by its family's template: each tool as its signature on one
# line instead of its JSON schema: the name, the parameters in order with their types ("?" after
# an optional one) and every constraint of a parameter's schema (enum, items, default, ...) as
# JSON. Prepended to the family's template, it replaces `tools` by these lines, which the template
# then renders where it renders tools. The descriptions are left out, as TINY_SYSTEM_PROMPT leaves
# out the docs: they would be half of every prompt, a model of a million parameters learns what
# the bundled functions do from the data instead, and their numbers ("Hour, 0 to 23.", "Python 3
# syntax") sit where the model must find the question's numbers to copy them. Every other model
# gets its family's full template with the JSON schemas.
TOOLS_ON_ONE_LINE = """\
{%- if tools %}
    {%- set listed = namespace(lines=[]) %}
    {%- for tool in tools %}
        {%- set tool = tool.function if tool.function is defined else tool %}
        {%- set schema = tool.parameters or {} %}
        {%- set properties = schema.properties or {} %}
        {%- set line = namespace(text=tool.name + '(') %}
        {%- for name, field in properties.items() %}
            {%- set line.text = line.text + (', ' if not loop.first else '') + name
                + ('' if name in (schema.required or []) else '?') + ': ' + (field.type | string) %}
            {%- for key, value in field.items() if key not in ('type', 'description') %}
                {%- set line.text = line.text + ' ' + key + '=' + (value | tojson) %}
            {%- endfor %}
        {%- endfor %}
        {%- set listed.lines = listed.lines + [line.text + ')'] %}
    {%- endfor %}
    {%- set tools = listed.lines %}
{%- endif %}
"""


def bundled_train_split(path: Path | str | None) -> Path | None:
    """The bundled training split ``path`` names (None when it is not one)."""
    if not path:
        return TINY_TRAIN
    resolved = resolve(path).resolve()
    return next((split for split in BUNDLED_EVAL if split.resolve() == resolved), None)


def tiny_spec(dataset_path: Path, tool_format: str = "") -> TinySpec:
    """The build of the tiny model for a bundled split. Multi-turn contexts are three times as
    long, so each prompt gets fewer demonstrations; the habit that RL has to unlearn there is
    stopping after the first call (algos/tiny/teacher.py).

    FC builds (``tool_format``) see the tools in every prompt, which the prompting prompt
    leaves out: each tool's signature on one line and the template's fixed text as single
    tokens keep those prompts about as long as the prompting prompt (34 tokens on average
    instead of 29 single-turn; 77 with the descriptions, 191 as JSON), so the build costs about
    what the prompting build does (docs/benchmarks/learning.md, "The FC default")."""
    multi_turn = dataset_path == MULTI_TURN_TRAIN
    if tool_format:
        compact = {"compact_tools": True, "template_tokens": True, "tool_format": tool_format}
        if multi_turn:
            return TinySpec(pretrain_steps=2200, demonstrations=2, habit_rate=0.6, **compact)
        return TinySpec(**compact)
    if multi_turn:
        return TinySpec(pretrain_steps=2200, demonstrations=2, habit_rate=0.7)
    return TinySpec()


def tokenizer_corpus(dataset_path: Path = TINY_TRAIN, tool_format: str = "", template: str | None = None) -> list[str]:
    """The texts the tokenizer learns from: every prompt and answer of the training split,
    written the way the env writes them (multi-turn: with the tool results of the ground
    truth's calls; FC mode: the first prompt as ``template``, by default the family's, renders
    it, the answers in its format)."""
    import gymnasium as gym

    import fcenv
    from fcenv.algos.model.warmup import answer_text, ground_truth_steps, written_in
    from fcenv.algos.tiny.teacher import PROSE
    from fcenv.chat_mode import ChatMode
    from fcenv.prompts import hinted_functions, system_prompt
    from fcenv.tool_formats import template_renderer

    # Before the tokenizer exists: prompting renders ChatML, FC mode ``template`` (default: the family's).
    chat_mode = ChatMode.from_flags(tool_format, TINY_SYSTEM_PROMPT,
                                    fc_renderer=template_renderer(template) if template else None)
    env = gym.make(fcenv.ENV_ID, dataset_path=str(dataset_path), **chat_mode.env_options())
    written = written_in(env.unwrapped.settings.tool_format) if tool_format else (lambda text: text)
    texts = []
    for index, task in enumerate(env.unwrapped.tasks):
        observation, _ = env.reset(options={"index": index})
        # FC mode: the prompt as the family's template shows the tools; prompting: the docs.
        texts.append(observation if tool_format else
                     system_prompt(hinted_functions(task.functions, task.language), TINY_SYSTEM_PROMPT))
        texts += [m["content"] for turn in task.question for m in turn]
        if task.kind == "ast":
            texts.append(written(answer_text(task.ground_truth)))
        elif task.kind == "multi_turn":
            for step in ground_truth_steps(task):
                texts.append(written(step.text))
                *_, info = env.step(written(step.text))
                texts += info.get("results", [])
    env.close()
    texts.append(PROSE)  # the teacher's prose (algos/tiny/teacher.py)
    return texts


def train_tokenizer(corpus: list[str], vocab_size: int):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    # Words (an optional leading space, underscores kept so function names stay whole),
    # single digits (numbers are copied digit by digit from question to call) and runs of
    # everything else (JSON punctuation and indentation become a handful of tokens).
    words_digits_rest = Regex(PRE_TOKENIZER_PATTERN)
    core.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(words_digits_rest, behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(corpus, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token=END, pad_token=PAD,
                                        padding_side="left")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def model_template(spec: TinySpec) -> str:
    """The chat template saved with the tiny model: its own (prompting), or its family's, with
    each tool's signature on one line when ``spec.compact_tools``."""
    from fcenv.chat_mode import ChatMode

    if not spec.tool_format:
        return CHAT_TEMPLATE
    family = ChatMode(tool_format=spec.tool_format).tool_format.chat_template
    return TOOLS_ON_ONE_LINE + family if spec.compact_tools else family


def template_pieces(template: str) -> list[str]:
    """The fixed text a chat template writes (its string constants) that is markup rather than
    words: role headers, the tools' frame and instructions, the calls' frame (``<|im_start|>``,
    ``<tool_call>\\n{"name": "``, ``[TOOL_CALLS] [``, ...). Real tokenizers of a family hold its
    markers as single tokens; the tiny one holds every such piece, so the template's text costs
    one token per piece and the tools and the chat the rest."""
    import re

    from jinja2 import Environment, nodes

    tree = Environment().parse(template)
    found = {node.value for node in tree.find_all(nodes.Const) if isinstance(node.value, str)}
    found |= {node.data for node in tree.find_all(nodes.TemplateData)}
    return sorted(text for text in found if len(text.strip()) >= 3 and re.search(r"[^\w\s]", text))


def tiny_config(tokenizer, spec: TinySpec):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True,
        attention_dropout=0.0,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )


def chat_renderer(tokenizer) -> Callable[[list[dict]], str]:
    """The env's ``renderer``: the tokenizer's own chat template, ending where the model answers."""

    def render(messages: list[dict]) -> str:
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    return render


def code_of(source: str) -> str:
    """Python source as what runs: its syntax tree without docstrings (comments never reach it)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def cache_key(corpus: list[str], spec: TinySpec) -> str:
    from fcenv.algos.tiny import teacher

    digest = hashlib.sha256()
    # The teacher's code decides the pretraining data, so it is part of the key too: its code,
    # not its text, so that editing its docs or comments rebuilds no one's model.
    # A prompting build's key does not name the (empty) tool format, so caches built before
    # FC mode existed stay valid.
    fields = {k: v for k, v in asdict(spec).items() if k not in LATER_FIELDS or v != LATER_FIELDS[k]}
    payload = {"version": BUILD_VERSION, "spec": fields, "prompt": TINY_SYSTEM_PROMPT,
               "teacher": code_of(Path(teacher.__file__).read_text()),
               "template": model_template(spec),
               "pre_tokenizer": PRE_TOKENIZER_PATTERN, "torch": torch.__version__.split("+")[0]}
    digest.update(json.dumps(payload, sort_keys=True).encode())
    for text in corpus:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def build_tiny(
    cache_dir: Path | str = DEFAULT_CACHE_DIR,
    spec: TinySpec | None = None,
    dataset_path: Path = TINY_TRAIN,
    log: Callable[[str], None] = print,
    tool_format: str = "",
    progress: bool = True,
) -> Path:
    """Return the folder of the cached tiny model and tokenizer for a bundled training split,
    building it if needed (``spec`` defaults to the split's, ``tiny_spec``, in ``tool_format``;
    ``progress``: a bar over the pretraining steps, the build's cost)."""
    spec = spec or tiny_spec(dataset_path, tool_format)
    template = model_template(spec)
    corpus = tokenizer_corpus(dataset_path, spec.tool_format, template if spec.tool_format else None)
    target = Path(cache_dir) / f"tiny-{cache_key(corpus, spec)}"
    if (target / "config.json").exists():
        return target
    log(f"building the embedded tiny model in {target} (once; later runs load it)")
    tokenizer = train_tokenizer(corpus, spec.vocab_size)
    if spec.tool_format:
        # The family's template, saved with the tokenizer: any client's apply_chat_template(tools=...)
        # then shows the model the prompt it was trained on.
        tokenizer.chat_template = template
    if spec.template_tokens:
        from tokenizers import AddedToken

        tokenizer.add_tokens([AddedToken(piece, normalized=False, special=False) for piece in template_pieces(template)])
    model = _pretrained_model(tokenizer, spec, dataset_path, log, progress)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tiny-", dir=target.parent))
    try:
        tokenizer.save_pretrained(staging)
        model.save_pretrained(staging)
        try:
            staging.rename(target)  # atomic: a reader sees a complete folder or none
        except OSError:
            if not (target / "config.json").exists():  # not a concurrent build that won
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _pretrained_model(tokenizer, spec: TinySpec, dataset_path: Path, log: Callable[[str], None], progress: bool):
    from transformers import LlamaForCausalLM

    from fcenv.algos.model.warmup import (
        ground_truth_examples,
        plain_logprobs,
        shared_context_logprobs,
        supervised_steps,
    )
    from fcenv.algos.tiny.teacher import Teacher, teacher_step, value_pools
    from fcenv.chat_mode import ChatMode
    from fcenv.data import load_tasks

    pools = value_pools(load_tasks(dataset_path))
    teacher = Teacher(habit_rate=spec.habit_rate, slip_rate=spec.slip_rate)
    draws = random.Random(spec.seed)

    def answers(task, step) -> list[str]:
        return [teacher_step(task, step, pools, draws, teacher) for _ in range(spec.demonstrations)]

    threads = torch.get_num_threads()
    # A fixed thread count: float sums (and so the trained weights) depend on how the work is
    # split, and the build must give the same model on any machine of a kind.
    torch.set_num_threads(BUILD_THREADS)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = LlamaForCausalLM(tiny_config(tokenizer, spec))
        # As the trainer will show the chats to the model built here (fcenv.algos.model.loading).
        chat_mode = ChatMode.from_flags(spec.tool_format, TINY_SYSTEM_PROMPT, fc_renderer=tokenizer,
                                        prompting_renderer=None if spec.tool_format else chat_renderer(tokenizer))
        examples = ground_truth_examples(dataset_path, tokenizer, chat_mode, spec.max_positions - 64, answers=answers,
                                         chained=False)
        model.train()
        logprobs = shared_context_logprobs if spec.share_contexts else plain_logprobs
        losses = supervised_steps(
            lambda batch: logprobs(model, batch), list(model.parameters()), examples,
            steps=spec.pretrain_steps, batch_size=spec.pretrain_batch, lr=spec.pretrain_lr,
            pad_id=tokenizer.pad_token_id, device="cpu", seed=spec.seed,
            groups=same_context_runs(examples) if spec.share_contexts else None,
            progress="pretraining the tiny model" if progress else "")
    torch.set_num_threads(threads)
    if losses:
        log(f"tiny model pretrained: {len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return model.eval()


def same_context_runs(examples: list[tuple[list[int], list[int]]]) -> list[list[int]]:
    """The indices of ``examples`` in runs of one context (a prompt's demonstrations follow each other)."""
    runs: list[list[int]] = []
    for index, (context, _) in enumerate(examples):
        if runs and examples[runs[-1][0]][0] == context:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs
