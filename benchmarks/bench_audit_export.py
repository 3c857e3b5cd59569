"""``effstats audit`` of an Open LLM Leaderboard export: 4,576 models, the v2 layout (model names with HTML links,
six benchmark columns with their raw twins, the published average, text and number columns of model metadata).

Target: the command (a process of its own, imports included) in at most 2 s. The table is simulated (abilities
drawn per model, each benchmark a noisy function of them, some cells missing, a few models listed twice) in a
temporary folder; the command runs ``--repeats`` times and the fastest run counts (the machine may be shared).
Prints wall and CPU (user + system) seconds and the peak resident memory.

Usage: python benchmarks/bench_audit_export.py [--models 4576] [--repeats 2] [--profile]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from bench_tables import _run  # the sibling script's: run as benchmarks/bench_audit_export.py

TASKS = ["IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-PRO"]


def write_export(path: Path, n_models: int, seed: int = 0) -> None:
    """An export of ``n_models`` rows in the Open LLM Leaderboard's v2 columns."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=n_models)
    names = [f"org{m % 300}/model-{m}-{rng.choice(['7B', '8B', '14B', '70B'])}" for m in range(n_models)]
    names[-5:] = names[:5]  # a few models listed twice (two precisions)
    scores = {}
    for j, t in enumerate(TASKS):
        s = 100 / (1 + np.exp(-(0.8 + 0.2 * j / len(TASKS)) * ability + rng.normal(0.5, 0.6, n_models)))
        s[rng.random(n_models) < 0.01] = np.nan
        scores[t] = np.round(s, 2)
    avg = np.round(np.nanmean(np.column_stack(list(scores.values())), axis=1), 2)
    df = pd.DataFrame({
        "eval_name": [n.replace("/", "_") + "_bfloat16" for n in names],
        "Precision": rng.choice(["bfloat16", "float16"], n_models),
        "Type": rng.choice(["🟢 pretrained", "💬 chat models (RLHF, DPO, IFT, ...)", "🤝 base merges and moerges"],
                           n_models),
        "T": rng.choice(["🟢", "💬", "🤝"], n_models),
        "Weight type": "Original",
        "Architecture": rng.choice(["LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"], n_models),
        "Model": [f'<a target="_blank" href="https://example.org/{n}">{n}</a>' for n in names],
        "fullname": names,
        "Model sha": [f"{rng.integers(2**63):016x}" for _ in range(n_models)],
        "Average ⬆️": avg,
        "Hub License": rng.choice(["apache-2.0", "mit", "llama3", "other"], n_models),
        "Hub ❤️": rng.integers(0, 5000, n_models),
        "#Params (B)": np.round(rng.lognormal(2.5, 1, n_models), 2),
        "Available on the hub": True,
        "MoE": False,
        "Flagged": False,
        "Chat Template": rng.random(n_models) < 0.5,
        "CO₂ cost (kg)": np.round(rng.lognormal(0, 1, n_models), 3),
        **{k: v for t in TASKS for k, v in ((f"{t} Raw", np.round(scores[t] / 100, 4)), (t, scores[t]))},
        "Merged": rng.random(n_models) < 0.3,
        "Official Providers": False,
        "Upload To Hub Date": pd.Timestamp("2024-06-01") + pd.to_timedelta(rng.integers(0, 200, n_models), "D"),
        "Submission Date": pd.Timestamp("2024-06-01") + pd.to_timedelta(rng.integers(0, 200, n_models), "D"),
        "Generation": rng.integers(0, 4, n_models),
        "Base Model": [f"org{m % 50}/base-{m % 50}" for m in range(n_models)],
    })
    df.to_csv(path, index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=4576)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--profile", action="store_true", help="print cProfile's 25 costliest calls of one run")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="effstats-bench-audit-") as tmp:
        f = Path(tmp) / "open-llm-leaderboard.csv"
        write_export(f, args.models)
        # --force: every repeat after the first replaces the report the one before wrote
        cmd = [sys.executable, "-m", "effstats", "audit", str(f), "--out", str(Path(tmp) / "report"), "--force"]
        if args.profile:
            cmd[1:3] = ["-m", "cProfile", "-s", "cumulative", "-m", "effstats"]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            print("\n".join(out.splitlines()[:60]))
            return
        runs = [_run(cmd) for _ in range(args.repeats)]
        wall, cpu, peak = min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)
        print(f"effstats audit, {args.models:,}-row Open LLM Leaderboard export ({f.stat().st_size / 2**20:.1f} MB), "
              f"best of {args.repeats}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak {peak:.0f} MB (target 2 s)")


if __name__ == "__main__":
    main()
