"""Benchmarks, each run as ``python -m bench.NAME``. ``bench_*`` runs its experiment itself (times fcenv,
against a peer where there is one, or builds, trains, answers and scores) for BENCHMARKS.md; the others
measure or draw what exists (a training run, answers, a profile), write BFCL samples, or serve the scripts.
"""
