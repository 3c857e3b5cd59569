"""Imports: ``effstats.irt`` stands without ``effstats.disco`` (no import circle), and the random item draw they
share (``select_random``, defined in the neutral module ``effstats._subset``) is ``select_top_k`` of uniform
random scores, as ``effstats.disco`` exports it.
"""
import subprocess
import sys

import numpy as np
import pytest

from effstats._subset import select_random


def test_importing_irt_does_not_import_disco():
    # a fresh interpreter: importing effstats.irt and fitting TinyBenchmarks with every selection loads no module
    # of effstats.disco
    code = (
        "import sys, warnings\n"
        "import effstats.irt\n"
        "before = sorted(m for m in sys.modules if m.startswith('effstats.disco'))\n"
        "from effstats.datasets import simulate_responses\n"
        "Y = simulate_responses(20, 60, rng=0).values.astype(bool)\n"
        "warnings.simplefilter('ignore')\n"
        "for sel in ('random', 'anchor-corr', 'anchor-irt'):\n"
        "    effstats.irt.TinyBenchmarks(10, sel, n_dims=1, random_state=0).fit(Y[:15]).predict(Y[15:])\n"
        "print(before, sorted(m for m in sys.modules if m.startswith('effstats.disco')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] []"


def test_disco_exports_the_shared_select_random():
    from effstats import disco

    assert disco.select_random is select_random


@pytest.mark.parametrize("grouped", [False, True])
def test_select_random_is_select_top_k_of_uniform_scores(grouped):
    from effstats.disco import select_top_k

    rng = np.random.default_rng(5)
    for seed in range(200):
        n = int(rng.integers(1, 120))
        k = int(rng.integers(1, n + 1))
        groups = rng.integers(0, int(rng.integers(1, 8)), n) if grouped else None
        expected = select_top_k(np.random.default_rng(seed).random(n), k, groups=groups)
        np.testing.assert_array_equal(select_random(n, k, groups=groups, rng=seed), expected)


def test_select_random_refuses_bad_arguments():
    with pytest.raises(ValueError, match="^k: "):
        select_random(5, 6, rng=0)
    with pytest.raises(ValueError, match="^groups: expected shape"):
        select_random(5, 2, groups=[0, 1], rng=0)
