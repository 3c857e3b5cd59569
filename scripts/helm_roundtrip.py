"""HELM's round trip on a suite of run folders: the values read against stats.json, and held-out coverage.

For every run folder under SUITE (``benchmark_output/runs/<suite>``, as ``helm-run`` writes it) the mean of the
per-instance values ``read_helm_runs`` reads is compared with the mean HELM wrote to the run's ``stats.json`` for
the metric and split, unperturbed. Then each model in turn is the new model: ``select`` on the other models' runs,
``estimate`` from its own full runs read on the manifest's instances (``restrict_to_manifest``), and its interval
is checked against its mean over every instance.

    .venv/bin/python scripts/helm_roundtrip.py benchmark_output/runs/v1 --metric exact_match --budgets 20,40
    .venv/bin/python scripts/helm_roundtrip.py runs/safety --metric bbq_accuracy --trials separate

The functions live in tests/helm_fixtures.py, where tests/test_helm_workflow.py runs them on a suite written in
HELM's layout from a known truth.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))  # the round trip lives beside the tests that use it

from helm_fixtures import held_out_coverage, stats_json_agreement  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("suite", type=Path, help="a folder of HELM run folders")
    p.add_argument("--metric", default="exact_match")
    p.add_argument("--split", default="test")
    p.add_argument("--trials", default="mean", help="mean, separate or a train trial's index")
    p.add_argument("--budgets", default="20,40", help="comma-separated numbers of items")
    p.add_argument("--method", default="sortsearch")
    p.add_argument("--confidence", type=float, default=0.95)
    args = p.parse_args(argv)
    trials = int(args.trials) if args.trials.isdigit() else args.trials
    read = {"metric": args.metric, "split": args.split, "trials": trials}

    agree = stats_json_agreement(args.suite, args.metric, args.split)
    checked = [r for r in agree if r["stats_json"] is not None]
    worst = max((abs(r["read"] - r["stats_json"]) for r in checked), default=float("nan"))
    print(f"{len(agree)} runs with {args.metric!r} on {args.split!r}: {len(checked)} with a stats.json mean, largest "
          f"difference {worst:.2e}")
    for r in agree:
        if r["stats_json"] is None or abs(r["read"] - r["stats_json"]) > 1e-9:
            print(f"  {r['run']}: read {r['read']:.6f}, stats.json {r['stats_json']}")

    budgets = tuple(int(b) for b in args.budgets.split(","))
    with tempfile.TemporaryDirectory() as work, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = held_out_coverage(args.suite, Path(work), budgets, method=args.method,
                                 confidence_level=args.confidence, **read)
    for b in budgets:
        at = [r for r in rows if r["budget"] == b]
        mae = 100 * sum(abs(r["estimate"] - r["truth"]) for r in at) / len(at)
        print(f"{b} items: {sum(r['covered'] for r in at)} of {len(at)} held-out models covered "
              f"({100 * args.confidence:g} % intervals), MAE {mae:.2f} points")
        for r in at:
            if not r["covered"]:
                print(f"  {r['model']}: truth {r['truth']:.4f}, interval [{r['low']:.4f}, {r['high']:.4f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
