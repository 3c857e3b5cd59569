"""Every bad input of the command line gets one line: exit status 2 with exactly one line on stderr, or status 0 with a
correct result (the clean input's for inputs that mean the same; recomputed by brute force for the others).

The campaign (tests/cli_fuzz.py) derives its cases systematically from small real inputs of every command: each
field of an lm-eval sample record with each kind of bad value, whole files spoilt, CSV tables in wrong layouts or
with bad cells, each option of each command with bad values. A slice of about one case in twelve runs here;
the whole campaign (over 1,200 cases) under the ``slow`` marker, and ``scripts/fuzz_report.py --cli`` prints its
counts.
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

if str(Path(__file__).parent) not in sys.path:  # the harness sits beside this file (any pytest import mode)
    sys.path.insert(0, str(Path(__file__).parent))
import cli_fuzz as F  # noqa: E402

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

CASES = F.cases()

# Cases allowed to fail, each with what it needs (none today); a listed case that passes is fine.
KNOWN: dict[str, str] = {
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return F.Workspace(tmp_path_factory.mktemp("cli_fuzz") / "ws")


def _failures(outcomes: list[F.Outcome]) -> list[str]:
    return [o.line() for o in outcomes if o.status in F.BAD + ("refused",) and o.case not in KNOWN]


def test_the_campaign_covers_every_command_with_over_500_cases():
    from effstats.cli import main  # noqa: F401 -- the commands the campaign drives

    by = collections.Counter(c.command for c in CASES)
    assert len(CASES) >= 500
    assert {"select", "estimate", "start", "update", "audit", "effstats"} <= set(by), by
    assert min(by[k] for k in ("select", "estimate", "start", "update", "audit")) >= 40, by
    assert set(KNOWN) <= {c.name for c in CASES}  # a renamed case is not silently left out


def test_fast_slice_every_bad_input_gets_one_line(ws, tmp_path):
    chosen = F.fast_slice(CASES, every=12)
    assert len({c.command for c in chosen}) == 6
    outcomes = F.campaign(ws, chosen, tmp_path)
    assert not _failures(outcomes), "\n".join(_failures(outcomes))


@pytest.mark.slow
@pytest.mark.exhaustive
def test_full_campaign_every_bad_input_gets_one_line(ws, tmp_path):
    outcomes = F.campaign(ws, CASES, tmp_path)
    counts = collections.Counter(o.status for o in outcomes)
    assert counts["clear"] > 400 and counts["ok"] > 400, counts
    assert not _failures(outcomes), "\n".join(_failures(outcomes))


# ------------------------------------------------------------------------------------------- the classifier
def _probe(ws, tmp_path, expect, build, check=None, base="select"):
    case = F.Case("probe", "select", build, expect, base=base, check=check)
    return F.run_case(ws, case, tmp_path / "probe")


def _clean_select(ws, d):
    return ["select", ws.root / "ref", "--budget", 10, "--method", "random", "--out", d / "out"]


def test_classifier_accepting_a_bad_input_is_silent(ws, tmp_path):
    assert _probe(ws, tmp_path, F.REFUSE, _clean_select).status == "silent"


def test_classifier_the_same_result_is_ok_and_another_is_silent(ws, tmp_path):
    assert _probe(ws, tmp_path, F.SAME, _clean_select).status == "ok"
    other_seed = _probe(ws, tmp_path / "2", F.SAME, lambda ws, d: _clean_select(ws, d) + ["--seed", 5])
    assert other_seed.status == "silent" and "differs from the clean input's" in other_seed.detail


def test_classifier_refusals_one_line_or_not(ws, tmp_path):
    bad = lambda ws, d: ["select", d / "nowhere", "--budget", 10, "--out", d / "out"]  # noqa: E731
    assert _probe(ws, tmp_path, F.REFUSE, bad).status == "clear"
    assert _probe(ws, tmp_path / "2", F.SAME, bad).status == "refused"
    assert _probe(ws, tmp_path / "3", F.EITHER, bad).status == "clear"


def test_classifier_an_escaping_exception_is_a_traceback(ws, tmp_path, monkeypatch):
    import effstats.workflow._cli as wcli

    def boom(args):
        raise KeyError("looks")

    monkeypatch.setattr(wcli, "_select", boom)
    o = _probe(ws, tmp_path, F.REFUSE, _clean_select)
    assert o.status == "traceback" and "KeyError" in o.detail


def test_classifier_a_failed_check_is_silent(ws, tmp_path):
    o = _probe(ws, tmp_path, F.EITHER, _clean_select, check=lambda ws, d, out: "wrong on purpose")
    assert o.status == "silent" and o.detail == "wrong on purpose"
