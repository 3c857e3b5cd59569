"""``pytest --share K/N`` (the root conftest.py): make test runs each quick test on one of two stacks.

The shares of a few files are collected in a subprocess, as ``make test`` collects them: together they hold every
test, the slow tests and the docstring examples are in each, the other tests in exactly one, and an xdist group's
tests stay together.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ["tests/test_bitpack.py", "tests/test_matrix.py", "tests/test_readme.py", "effstats/bitpack.py"]
# The runs share one process: ``pytest.main`` once a run, each with its own configuration, plugins and conftests
# (pytest imports a conftest again for every session), its output and exit status apart. The imports of the test
# modules and of effstats, which are most of a run's CPU time, are then paid once instead of once a run.
_RUNS = """
import contextlib, io, json, sys
import pytest
results = []
for args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = int(pytest.main(["--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *args]))
    results.append([status, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def _collect(*runs: list[str]) -> list[tuple[int, str, str]]:
    """Each run's exit status, stdout and stderr: ``pytest --collect-only -q ARGS FILES`` for each ARGS of ``runs``."""
    p = subprocess.run([sys.executable, "-c", _RUNS, json.dumps([[*args, *FILES] for args in runs])], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr + p.stdout
    return [tuple(r) for r in json.loads(p.stdout.splitlines()[-1])]


def _ids(run):
    status, out, err = run
    assert status == 0, err + out
    return {line.strip() for line in out.splitlines() if "::" in line}


def test_shares_split_the_quick_tests_and_repeat_the_slow_ones_and_the_examples():
    names = ["all", "slow", "1", "2"]
    runs = _collect(["-m", "not exhaustive"], ["-m", "slow and not exhaustive"],
                    ["-m", "not exhaustive", "--share", "1/2"], ["-m", "not exhaustive", "--share", "2/2"])
    ids = {name: _ids(run) for name, run in zip(names, runs)}
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
    bads = ["3/2", "0/2", "1", "a/b", "1/0"]
    for bad, (status, out, err) in zip(bads, _collect(*(["--share", bad] for bad in bads)), strict=True):
        lines = [line for line in err.splitlines() if line.strip()]
        assert status == 4 and not out.strip(), (bad, status, out)  # pytest's usage error, before any collection
        assert len(lines) == 1 and lines[0].startswith("ERROR: --share:") and repr(bad) in lines[0], err
