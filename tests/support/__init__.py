"""Helpers only the tests use (no tests here); what the benchmarks share with the tests is in
the top-level ``harness`` package.

- ``backend_differential``: the same direct method calls on our backends and on BFCL's;
- ``files_math_social_calls``: perturbed calls for the file system, math, message and twitter
  backends; ``tickets_trading_travel_vehicle_calls`` and
  ``tickets_trading_travel_vehicle_sequences``: calls and random
  call sequences for the ticket, trading, travel and vehicle backends; ``memory_calls``:
  snapshot chains of calls on the memory backends, ours and the oracle's; ``memory_episodes``:
  scripted memory episodes played through the env;
- ``source_samples``: records in the layouts of other training sets (tests/env/test_sources.py);
- ``source_forms``: the same records as JSON Lines, JSON, Parquet and a saved dataset;
- ``verl_driver`` and ``verl_injection_driver``: run in verl's venv by tests/doors/test_verl.py;
- ``answers``: a right answer to a single-turn task, as text;
- ``question_files``: small question files cut from BFCL's data (tests/cli);
- ``replay``: our side of a multi-turn trajectory in the oracle's answer shape;
- ``runs``: tiny training runs and CLI invocations;
- ``scripted_engine``: a rollout engine that plays given action texts (the model's part, scripted).
- ``layout``: the installed package's modules by their dotted names, and its layers (tests/repo).
"""
