"""No crash and no silent garbage: every public callable, every fuzzed argument, every kind of bad value.

The table of callables is tests/fuzz_cases.py (public import paths only); the bad values and the classifier are
tests/fuzz_harness.py. For each (callable, argument) hypothesis draws the random part of every bad value
(where the NaN goes, how far out of range an id is, ...) and the test requires, for each one, either a
``ValueError``/``TypeError`` whose message names the argument, or (for equivalent / unusual-but-valid inputs)
a correct finite result. ``scripts/fuzz_report.py`` runs the same table with more variants and prints the counts.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if str(Path(__file__).parent) not in sys.path:  # the harness sits beside this file (any pytest import mode)
    sys.path.insert(0, str(Path(__file__).parent))
import fuzz_cases  # noqa: E402
import fuzz_harness as H  # noqa: E402

CASES = fuzz_cases.cases()
# draws per (callable, argument), each trying every bad value once (~3,800 calls); scripts/fuzz_report.py runs more
MAX_EXAMPLES = 1

# (case name, argument) pairs still failing in modules owned by others, each listed in that module's fuzz findings
# The owners are fixing them; the lead removes an entry when its fix lands (strict: an unexpected pass fails).
KNOWN: dict[tuple[str, str], str] = {
}


def _params():
    out = []
    for case in CASES:
        for arg in case.args:
            key = (case.name, arg.name)
            marks = ([pytest.mark.xfail(strict=True, reason=f"{KNOWN[key]} (owner fixing; see fuzz findings)")]
                     if key in KNOWN else [])
            out.append(pytest.param(case, arg, id=f"{case.name}-{arg.name}", marks=marks))
    return out


@pytest.mark.parametrize("case,arg", _params())
@settings(derandomize=True, max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
          database=None)
@given(data=st.data())
def test_bad_input_gives_clear_error_or_correct_result(case, arg, data):
    failures = []
    for label, expectation, make in arg.values():
        seed = data.draw(st.integers(0, 2**32 - 1), label=label)
        o = H.run_one(case, arg, label, expectation, make, seed)
        if o.status == "skipped" and o.detail.startswith("valid call failed"):
            pytest.fail(f"{case.name}: the valid call itself fails: {o.detail}")
        if o.status in ("crash", "garbage"):
            failures.append(o.line())
    assert not failures, "\n".join(failures)


RETURNS_NONE = {"Benchmark.check_connected"}  # a check that raises or returns nothing


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES if c.valid])
def test_valid_call_works(case):
    """The harness is not vacuous: each table entry's valid arguments give a result."""
    out = H.baseline(case)
    assert out is not None or case.name in RETURNS_NONE


# ------------------------------------------------------------------------------------------- the classifier
def _case(fn, args):
    # the valid call (an array) works; the fuzzed value (a list) goes through ``fn``
    return H.Case("probe", "probe", lambda kw: fn(**kw) if isinstance(kw["x"], list) else kw["x"],
                  lambda: {"x": np.ones(3)}, [H.Arg("x", args)])


@pytest.mark.parametrize(
    "fn,expectation,status",
    [
        (lambda x: (_ for _ in ()).throw(ValueError("x: expected finite values")), H.FAIL, "clear"),
        (lambda x: (_ for _ in ()).throw(ValueError("bad value")), H.FAIL, "crash"),  # does not name the argument
        (lambda x: (_ for _ in ()).throw(IndexError("x: index 5 out of range")), H.FAIL, "crash"),  # wrong type
        # numpy 2's scalar reprs in the message or in a warning
        (lambda x: (_ for _ in ()).throw(ValueError("x: unknown ids [np.int64(5)]")), H.FAIL, "crash"),
        (lambda x: warnings.warn("x: 1 cells missing on items [np.str_('a')]") or np.asarray(x, float) + 1, H.MAY,
         "crash"),
        (lambda x: np.asarray(x, float).sum(), H.FAIL, "garbage"),  # accepted an invalid value
        (lambda x: np.asarray(x, float) * np.nan, H.MAY, "garbage"),  # NaN where the valid call is finite
        (lambda x: np.asarray(x, float) + 1, H.MAY, "ok"),
        (lambda x: np.asarray(x, float), H.SAME, "ok"),
    ],
)
def test_classifier(fn, expectation, status):
    H._BASELINES.pop("probe", None)
    case = _case(fn, [("v", expectation, lambda v, r: np.asarray(v).tolist())])
    arg = case.args[0]
    label, exp, make = arg.values()[0]
    assert H.run_one(case, arg, label, exp, make, 0).status == status


def test_bad_values_are_bad():
    """A few of the generated values, checked by hand."""
    rng = np.random.default_rng(0)
    x = np.zeros((3, 4), bool)
    made = {lab: make(x, rng) for lab, _, make in H.BINARY}
    assert np.isnan(made["nan"]).sum() == 1 and made["empty"].size == 0
    assert np.iscomplexobj(made["complex"]) and made["strings"].dtype.kind == "U"
    assert len({len(row) for row in made["ragged"]}) == 2 and (made["twos"] == 2).sum() == 1
    assert made["ndim-"].ndim == 1 and made["ndim+"].ndim == 3


# ------------------------------------------------------------------------------------------- the reported examples
def _x():
    return fuzz_cases.X()


def _corrupt_npz(tmp_path):
    p = tmp_path / "digits.npz"
    np.savez(p, labels=np.array([{"evil": 1}], dtype=object))  # an object array: loading it would unpickle
    return p


BAD_INPUT_EXAMPLES = [
    ("complex-dense", lambda t: fuzz_cases.pub("effstats.bitpack.PackedBinaryMatrix").from_dense(_x() + 1j), "dense"),
    ("complex-metric", lambda t: fuzz_cases.pub("effstats.metrics.mae")(_x()[:2] + 1j, _x()[:2]), "a"),
    ("complex-values", lambda t: fuzz_cases.pub("effstats.responses.ResponseMatrix")(_x() * (1 + 1j)), "values"),
    ("take_rows-50", lambda t: fuzz_cases.pub("effstats.bitpack.PackedBinaryMatrix").from_dense(_x()).take_rows([50]),
     "rows"),
    ("abilities-item-99",
     lambda t: fuzz_cases.fitted("effstats.irt.IRT2PL", method="jml", max_iter=20).abilities(_x()[:, :5],
                                                                                             items=[0, 1, 2, 3, 99]),
                                                                                             "items"),
    ("flash_helm-no-models",
     lambda t: fuzz_cases.pub("effstats.reliability.flash_helm")(fuzz_cases.EX_RM(), [], sizes=(2, None), n_boot=5,
                                                                 rng=0), "new_models"),
    ("sizes-with-strings",
     lambda t: fuzz_cases.pub("effstats.reliability.efficiency_curve")(fuzz_cases.EX_RM(), "examples", sizes=[2, "a"],
                                                                       n_boot=5), "sizes"),
    ("rank_models-duplicate-ids", lambda t: fuzz_cases.pub("effstats.sequential.rank_models")(
        np.tile((np.arange(300) % 3 == 0).astype(float), (3, 1)), model_ids=["a", "a", "b"], rng=0), "model_ids"),
    ("from_row_blocks-twos", lambda t: fuzz_cases.pub("effstats.bitpack.PackedBinaryMatrix").from_row_blocks(
        4, 8, lambda s, e: np.full((e - s, 8), 2)), "make_block"),
    ("budget_curve-empty", lambda t: fuzz_cases.fitted("effstats.sortsearch.SortSearch").budget_curve(_x()[:3], []),
     "budgets"),
    ("ragged-disco-fit",
     lambda t: fuzz_cases.pub("effstats.disco.DISCO")(n_items=5, predictor="knn", pca=None).fit([[0.1, 0.9], [0.5]]),
     "source_outputs"),
    ("ragged-irt-fit", lambda t: fuzz_cases.pub("effstats.irt.IRT2PL")().fit([[1, 0, 1], [0, 1]]), "responses"),
    ("corrupt-digits-file", lambda t: fuzz_cases.pub("effstats.datasets.load_lifelong_digits")(_corrupt_npz(t)),
     "path"),
]


@pytest.mark.parametrize("call,name", [pytest.param(c, n, id=i) for i, c, n in BAD_INPUT_EXAMPLES])
def test_reported_examples_give_clear_errors(call, name, tmp_path):
    with pytest.raises((ValueError, TypeError)) as err:
        call(tmp_path)
    assert str(err.value).startswith(name) or f"{name}:" in str(err.value), str(err.value)


# ------------------------------------------------------------------------------------------- coverage of the table
MODULES = ["responses", "bitpack", "splits", "sortsearch", "metrics", "disco", "irt", "reliability", "cli",
           "sequential", "datasets",
           "distributed", "workflow"]
# called by the package with objects it built itself (a stopping rule gets the evaluator's LookStats; a DIoR plan
# gets its own statistic's output), so there is no user input to fuzz
NOT_FUZZED = ("StoppingRule.", "LookStats.z_at", ".fires", ".outcome", ".check_data", "Futility.conditional_power",
              "BetaSpendingFutility.lower_bound", "DIoRPlan.result")


def _n_params(f, method: bool) -> int:
    import inspect

    try:
        ps = [p for p in inspect.signature(f).parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        return 0
    return len(ps) - (1 if method and ps and ps[0].name in ("self", "cls") else 0)


def test_every_public_callable_with_input_is_in_the_table():
    import importlib
    import inspect

    names = " ".join(c.name for c in CASES)
    missing = []
    for m in MODULES:
        mod = importlib.import_module(f"effstats.{m}")
        for n in getattr(mod, "__all__", []):
            obj = getattr(mod, n)
            if inspect.isclass(obj):
                for k, v in vars(obj).items():
                    q = f"{n}.{k}"
                    # effstats' own methods: scikit-learn >= 1.3 adds set_{fit,predict,score}_request to the class
                    own = getattr(getattr(obj, k), "__module__", "effstats").startswith("effstats")
                    if not k.startswith("_") and callable(getattr(obj, k)) and _n_params(getattr(obj, k),
                                                                                         True) and q not in names \
                            and own and not any(x in q for x in NOT_FUZZED):
                        missing.append(f"effstats.{m}.{q}")
            elif callable(obj) and _n_params(obj, False) and n not in names:
                missing.append(f"effstats.{m}.{n}")
    assert not missing, f"public callables not in tests/fuzz_cases.py: {missing}"
