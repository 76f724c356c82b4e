"""Helpers shared by the tests and used by nothing else (no tests here).

Backend call generators and the differential runner of the backend parity tests, the sample
records of other training-set formats, verl's in-venv driver, and the small shared pieces
(a ground-truth answer text, tiny training runs, CLI invocations, multi-turn replay). Code
the benchmarks share with the tests lives in the top-level ``harness`` package.
"""
