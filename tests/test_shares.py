"""``pytest --share K/N`` (the root conftest.py): make test runs each quick test on one of two stacks.

The shares of a few files are collected in subprocesses, as ``make test`` collects them: together they hold every
test, the slow tests and the docstring examples are in each, the other tests in exactly one, and an xdist group's
tests stay together.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ["tests/test_bitpack.py", "tests/test_matrix.py", "tests/test_readme.py", "effstats/bitpack.py"]


def _collect(*args):
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
           *args, *FILES]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ids(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err + out
    return {line.strip() for line in out.splitlines() if "::" in line}


def test_shares_split_the_quick_tests_and_repeat_the_slow_ones_and_the_examples():
    procs = {
        "all": _collect("-m", "not exhaustive"),
        "slow": _collect("-m", "slow and not exhaustive"),
        "1": _collect("-m", "not exhaustive", "--share", "1/2"),
        "2": _collect("-m", "not exhaustive", "--share", "2/2"),
    }
    ids = {name: _ids(proc) for name, proc in procs.items()}
    examples = {i for i in ids["all"] if i.startswith("effstats/")}
    assert examples and ids["slow"]
    assert ids["1"] | ids["2"] == ids["all"]
    assert ids["1"] & ids["2"] == ids["slow"] | examples
    quick = ids["all"] - ids["slow"] - examples
    assert quick & ids["1"] and quick & ids["2"]
    # the xdist group "matrix" (tests/test_matrix.py) shares module fixtures: one share holds all of it
    matrix = {i for i in ids["all"] if i.startswith("tests/test_matrix.py::")}
    assert matrix and (matrix <= ids["1"]) != (matrix <= ids["2"])


def test_a_share_that_is_not_k_of_n_is_refused_naming_the_option():
    for bad in ["3/2", "0/2", "1", "a/b", "1/0"]:
        out, err = _collect("--share", bad).communicate(timeout=300)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("ERROR: --share:") and repr(bad) in lines[0], err
