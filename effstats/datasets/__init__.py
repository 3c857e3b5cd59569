"""Datasets: bundled leaderboard tables, loaders for users' own outputs and for released per-item
predictions, the digits lifelong benchmark (real scikit-learn models) and synthetic generators.

Names load lazily from their submodules.
"""
from __future__ import annotations

import importlib

_NAMES = {
    # bundled public leaderboards (leaderboards.py)
    "load_leaderboard": "leaderboards",
    "load_helm": "leaderboards",
    "load_helm_lite": "leaderboards",
    "load_openllm": "leaderboards",
    "load_mmlu": "leaderboards",
    "load_imagenet_classes": "leaderboards",
    "list_leaderboards": "leaderboards",
    # users' own outputs (harness.py, helm.py)
    "read_lm_eval_samples": "harness",
    "read_scores_csv": "_score_tables",
    "read_scores_frame": "_score_tables",
    "read_helm_runs": "helm",
    # leaderboard score files as `effstats audit` reads them (_scores.py, _openllm_csv.py, _score_json.py,
    # _score_options.py)
    "read_scores": "_scores",
    "read_openllm_csv": "_openllm_csv",
    "SCORE_FORMATS": "_score_options",
    "DUPLICATE_POLICIES": "_score_options",
    "read_helm_json": "_score_json",
    "read_openllm_json": "_score_json",
    # released per-item predictions beside the checkout (predictions.py)
    "data_root": "predictions",
    "load_imagenet_predictions": "predictions",
    "load_cifar10_predictions": "predictions",
    "load_alpacaeval": "predictions",
    # real models on real data, built deterministically (_digits_build.py) and loaded (digits.py)
    "make_lifelong_digits": "_digits_build",
    "load_lifelong_digits": "digits",
    # synthetic generators (simulate.py)
    "simulate_responses": "simulate",
    "IRTParameters": "simulate",
    "simulate_packed_responses": "simulate",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'effstats.datasets' has no attribute {name!r}")


def __dir__():
    return __all__
