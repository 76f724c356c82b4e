"""What the tests and the benchmarks (bench/) share; not part of the installed package.

- ``oracle``: BFCL's reference checker, decoders and tool classes driven in their own venv
  (``.oracle-venv``, ``make oracle``), one fresh process per batch of requests;
- ``generators``, ``generators_fc``: model texts for every single-turn entry, right and wrong,
  as plain text and in each native tool-calling format;
- ``trajectories``: multi-turn ground-truth steps and perturbations of them;
- ``decoder_parity``: decoder texts for the parity corpus and the comparison with BFCL's decoders;
- ``format_answers``: answers in the return formats of BFCL's prompt variations, right and wrong;
- ``any_format``: FC answers right in any format (their JSON calls rewritten in the family's
  format, and judged again): the ceiling a format fix can reach;
- ``template_prompts``: prompts through the tokenizer's own chat template, as the independent
  clients (``bench/heldout.py``, ``bench/bfcl_flow.py``) render them;
- ``public_style_set``: a public-style training set that copies nothing of BFCL, and the tasks
  decontamination flags in it;
- ``fuzz_text``, ``strategies``, ``strategies_multi_turn``: the fuzz inputs (hypothesis);
- ``fuzz_properties``: the properties every fuzz input must keep (decoders, checkers, env steps);
- ``hostile_tools``: a user tool backend that misbehaves in every way we know;
- ``load``: a vector env under a long multi-turn load, with memory sampled;
- ``faults``: training runs killed at chosen points and resumed;
- ``tiny_test_model``: the tests' tiny model spec;
- ``agentic_slices``: small memory and web-search training sets cut from BFCL's data, with a
  local corpus for the web-search ones;
- ``reference_page``: docs/reference.md's flag tables, written from the parsers.

Run from the repository root (``python -m pytest``, ``python -m bench.bench_check``), where the
current folder on ``sys.path`` makes ``harness`` importable.
"""
