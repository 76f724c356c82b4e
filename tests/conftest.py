from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption(
        "--oracle-python",
        default=str(ROOT / ".oracle-venv" / "bin" / "python"),
        help="interpreter of the venv holding the reference checker (bfcl-eval)",
    )
    parser.addoption(
        "--require-oracle",
        action="store_true",
        help="fail, rather than skip, the parity tests when the oracle venv is missing (CI)",
    )
    parser.addoption(
        "--verl-python",
        default=str(ROOT / ".verl-venv" / "bin" / "python"),
        help="interpreter of the venv holding verl and this package (fcenv.verl's tests run in it)",
    )
    parser.addoption(
        "--require-verl",
        action="store_true",
        help="fail, rather than skip, fcenv.verl's tests when the verl venv is missing (CI)",
    )
    parser.addoption(
        "--require-vllm",
        action="store_true",
        help="fail, rather than skip, the vllm rollout engine's tests when vLLM is missing (CI)",
    )
    parser.addoption(
        "--bfcl-dir",
        default=None,
        help="folder with BFCL's data (default: ../shared/bfcl, else datasets/bfcl, else ~/.cache/fcenv/bfcl)",
    )


@pytest.fixture(scope="session")
def bfcl_dir(request) -> Path:
    given = request.config.getoption("--bfcl-dir")
    from fcenv.bfcl_data import DEFAULT_DIR

    candidates = [Path(given)] if given else [ROOT.parent / "shared" / "bfcl", ROOT / "datasets" / "bfcl", DEFAULT_DIR]
    for path in candidates:
        if (path / "BFCL_v4_simple_python.json").exists():
            return path
    pytest.fail(
        "BFCL data not found in " + ", ".join(map(str, candidates)) + "; run `python -m fcenv data bfcl`"
    )


@pytest.fixture(scope="session")
def oracle(request):
    from harness.oracle import Oracle

    python = Path(request.config.getoption("--oracle-python"))
    if not python.exists():
        message = f"reference checker venv not found at {python}; run `make oracle`"
        if request.config.getoption("--require-oracle"):
            pytest.fail(message)
        pytest.skip(message)
    return Oracle(python)


@pytest.fixture(scope="session")
def verl_python(request) -> Path:
    python = Path(request.config.getoption("--verl-python"))
    if not python.exists():
        message = f"verl venv not found at {python}; run `make verl`"
        if request.config.getoption("--require-verl"):
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.fixture(scope="session")
def vllm_ready(request) -> str:
    """The interpreter the vllm engine runs with (.vllm-venv's, `make vllm`), checked to hold vLLM."""
    from algos.rollout.vllm import default_python, vllm_missing

    python = default_python()
    missing = vllm_missing(python)
    if missing:
        if request.config.getoption("--require-vllm"):
            pytest.fail(missing)
        pytest.skip(missing)
    return python


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """The folder of the tests' tiny model (harness/tiny_test_model.py), built once per session."""
    import torch

    from algos.tiny.build import build_tiny
    from harness.tiny_test_model import TEST_SPEC

    torch.set_num_threads(1)  # as the trainer runs; two test workers on two cores would oversubscribe
    return build_tiny(tmp_path_factory.getbasetemp() / "tiny-cache", TEST_SPEC, log=lambda message: None)
