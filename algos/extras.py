"""Whether this Python has the training extras (``pip install "fcenv[train]"``).

A module of its own, importing only the standard library, because both sides of a command ask it:
``fcenv.algos.commands`` before it imports a command's module, and ``fcenv.algos.train`` (which
``fcenv.algos.commands`` imports to run ``fcenv train``) when run as ``python train_fctncalling.py``.
"""

from __future__ import annotations

import importlib.util

TRAINING_PACKAGES = ("torch", "transformers", "peft", "accelerate")


def training_extras_missing() -> str:
    """What to install when this Python cannot import the training extras' packages (``pip
    install .`` without ``[train]``), else "": the training commands say it in one line instead
    of failing to import torch (even their flags need it: the registries' names are torch code)."""
    missing = [name for name in TRAINING_PACKAGES if importlib.util.find_spec(name) is None]
    if not missing:
        return ""
    return (f"needs the training extras, which are not installed (no {', '.join(missing)}): "
            f'pip install "fcenv[train]" (pip install torch==2.13.0 first for the CPU build)')
