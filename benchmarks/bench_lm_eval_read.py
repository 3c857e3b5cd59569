"""Reading lm-evaluation-harness ``--log_samples`` logs: ``read_lm_eval_samples`` parsing every file, the same
read taken from the cache of parsed files (``effstats.datasets._lm_eval_cache``: what every command after the first
of a loop reads), and ``json.loads`` of every line of the same files (the floor of any parse in Python).

Each measurement is a process of its own (imports included): CPU seconds (user + system) and peak resident memory
(MB). The logs are written by ``write_lm_eval_samples`` (multiple-choice documents with ``--choices`` choices, the
loglikelihoods as strings as recent harness versions write them) into a temporary folder, or ``--logs`` names an
existing ``--output_path`` folder. Each process runs ``--repeats`` times; the fastest run counts (the machine may be
shared).

Usage: python benchmarks/bench_lm_eval_read.py [--models 27] [--items 14021] [--choices 10] [--repeats 2]
       [--logs DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_tables import _run  # the sibling script's: run as benchmarks/bench_lm_eval_read.py

READ = "import sys; from effstats.datasets import read_lm_eval_samples; read_lm_eval_samples(sys.argv[1])"
LOADS = ("import json, pathlib, sys\n"
         "for f in sorted(pathlib.Path(sys.argv[1]).rglob('samples_*.jsonl')):\n"
         "    with open(f, encoding='utf-8') as fh:\n"
         "        for line in fh:\n"
         "            json.loads(line)\n")


def _read(code: str, logs: Path, env: dict) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident memory (MB) of ``code`` reading ``logs`` in a process."""
    return _run([sys.executable, "-c", code, str(logs)], env)


def _write_logs(folder: Path, n_models: int, n_items: int, n_choices: int) -> None:
    from effstats import ResponseMatrix
    from effstats.workflow import write_lm_eval_samples

    rng = np.random.default_rng(0)
    tasks = {"cifar10": n_items * 10 // 14, "cifar10_1_v6": n_items * 2 // 14}
    tasks["cifar10_1_v4"] = n_items - sum(tasks.values())
    items = [f"{t}/{i}" for t, n in tasks.items() for i in range(n)]
    ability = rng.uniform(0.6, 0.97, n_models)
    x = (rng.random((n_models, n_items)) < ability[:, None]).astype(np.int8)
    rm = ResponseMatrix(x, model_ids=[f"org/model-{m}" for m in range(n_models)], item_ids=items)
    write_lm_eval_samples(rm, folder, n_choices=n_choices)
    for f in folder.rglob("*.jsonl"):  # logs of a run a minute ago: a file modified in the last seconds is not kept
        os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns - 60 * 10**9))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=int, default=27)
    p.add_argument("--items", type=int, default=14021)
    p.add_argument("--choices", type=int, default=10)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--logs", type=Path, default=None, help="an existing lm_eval --output_path folder")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        logs = a.logs
        if logs is None:
            logs = Path(tmp, "logs")
            _write_logs(logs, a.models, a.items, a.choices)
        size = sum(f.stat().st_size for f in logs.rglob("samples_*.jsonl")) / 1e6
        base = {k: v for k, v in os.environ.items() if k != "EFFSTATS_CACHE_DIR"}
        cached = dict(base, EFFSTATS_CACHE_DIR=str(Path(tmp, "cache")))
        _read(READ, logs, cached)  # the first read fills the cache
        rows = {"json.loads of every line": (LOADS, base),
                "read_lm_eval_samples, every file parsed": (READ, dict(base, EFFSTATS_CACHE_DIR="")),
                "read_lm_eval_samples, from the cache": (READ, cached)}
        best = {name: min((_read(code, logs, env) for _ in range(a.repeats)), key=lambda r: r[1])
                for name, (code, env) in rows.items()}
    print(f"{size:.0f} MB of samples files ({logs if a.logs else f'{a.models} models x {a.items} documents'})")
    print("| read | wall (s) | CPU (s) | peak (MB) |\n|---|---|---|---|")
    for name, (wall, cpu, peak) in best.items():
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
