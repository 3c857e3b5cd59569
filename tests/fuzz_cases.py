"""The table of public callables driven by the bad-input harness (tests/fuzz_harness.py).

Every entry imports through the public path (``effstats.sortsearch.SortSearch``, ``effstats.reliability.dior``
...), so the table stays valid when a module becomes a subpackage. Valid inputs are tiny so that a call
that (wrongly) accepts a bad value still returns quickly.
"""
from __future__ import annotations

import functools
import importlib
import os
from typing import Any

import numpy as np
import pandas as pd

from fuzz_harness import (
    ALIGN, ARRAY, BINARY, CALLABLE, NEEDS_BINARY, COLUMN, FAIL, FINITE, FLAG, FRACTION, FRAME, INT, LONG_FRAME, MAY,
    MISSING, OPTION, POSITIVE, PROBA, REAL, RNG, SAME, SHORT0, SHORT1, UNIT, Arg, Case, _ids, _positions, _sizes, files,
    scratch_dir,
)


def pub(path: str) -> Any:
    """``effstats.x.y`` → the object, imported through its public path."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
        except AttributeError:
            # e.g. "reliability=reliability_old" while a module moves
            alt = os.environ.get("EFFSTATS_FUZZ_FALLBACK", "")
            for pair in filter(None, alt.split(",")):
                old, new = pair.split("=")
                if f".{old}." in path:
                    return pub(path.replace(f".{old}.", f".{new}."))
            raise
        return obj
    raise ImportError(path)


# ------------------------------------------------------------------------------------------ fixtures
NM, NI, NC = 12, 24, 3


@functools.lru_cache(None)
def _data() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    ability = np.linspace(-1.5, 1.5, NM)[:, None]
    diff = rng.normal(size=(1, NI))
    X = rng.random((NM, NI)) < 1 / (1 + np.exp(-(ability - diff)))
    X[0, 0], X[1, 0] = True, False  # no constant first column
    logits = rng.normal(size=(NM, NI, NC))
    P = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    labels = rng.integers(0, NC, NI)
    scores = np.clip(0.2 + 0.6 * np.linspace(0, 1, 8)[:, None] + rng.normal(0, 0.08, (8, 6)), 0, 1)
    return dict(X=X, P=P, labels=labels, scores=scores)


def X() -> np.ndarray:
    return _data()["X"].copy()


def P() -> np.ndarray:
    return _data()["P"].copy()


def LAB() -> np.ndarray:
    return _data()["labels"].copy()


def S() -> np.ndarray:
    """Scores of 8 models on 6 scenarios (a leaderboard table)."""
    return _data()["scores"].copy()


def RM(**kw: Any):
    ResponseMatrix = pub("effstats.responses.ResponseMatrix")
    items = pd.DataFrame({"scenario": [f"s{j % 3}" for j in range(NI)],
                          "subscenario": [f"u{j % 6}" for j in range(NI)]},
                         index=[f"i{j}" for j in range(NI)])
    models = pd.DataFrame({"release_date": pd.date_range("2020-01-01", periods=NM, freq="MS"),
                           "size": np.arange(NM) + 1.0},
                          index=[f"m{i}" for i in range(NM)])
    return ResponseMatrix(X(), model_ids=models.index, item_ids=items.index, items=items, models=models, **kw)


@functools.lru_cache(None)
def _prm():
    return pub("effstats.responses.ResponseMatrix").from_probabilities(P(), LAB())


def PRM():
    return _prm()


def EX_RM():
    """Per-example data for reliability: 6 models × (3 scenarios × 8 examples × 2 prompts)."""
    rng = np.random.default_rng(3)
    n_ex, n_pr, n_sc, n_m = 8, 2, 3, 6
    cols = [(s, e, p) for s in range(n_sc) for e in range(n_ex) for p in range(n_pr)]
    items = pd.DataFrame(cols, columns=["scenario", "example", "prompt"]).astype(str)
    items["subscenario"] = items["scenario"]
    items.index = [f"it{j}" for j in range(len(cols))]
    ability = np.linspace(-1, 1, n_m)[:, None]
    x = rng.random((n_m, len(cols))) < 1 / (1 + np.exp(-(ability - rng.normal(size=(1, len(cols))))))
    return pub("effstats.responses.ResponseMatrix")(x, items=items, item_ids=items.index)


def SPLIT():
    return pub("effstats.splits.ModelSplit")(np.arange(0, NM - 3), np.arange(NM - 3, NM))


_FITTED: dict = {}


def fitted_once(path: str, data: Any = None, **params: Any):
    """A fitted estimator shared by the calls that only read it (predict, abilities, ...)."""
    key = (path, repr(sorted(params.items())), None if data is None else id(data))
    if key not in _FITTED:
        _FITTED[key] = fitted(path, data, **params)
    return _FITTED[key]


def fitted(path: str, data: Any = None, **params: Any):
    import inspect

    est = pub(path)(**params)
    if "random_state" in inspect.signature(type(est)).parameters and "random_state" not in params:
        est.random_state = 0
    return est.fit(X() if data is None else data)


# ------------------------------------------------------------------------------------------ helpers
def A(name: str, bad: list, *aliases: str, skip: tuple = (), expect: dict | None = None) -> Arg:
    return Arg(name, bad, aliases, skip, dict(expect or {}))


def fn(path: str):
    """Call ``path(**kwargs)``."""
    return lambda kw: pub(path)(**kw)


def method(make, meth: str, split: tuple[str, ...] = ()):
    """``make(**init_kw).meth(**rest)``: ``split`` names the keys that go to the constructor."""

    def call(kw: dict) -> Any:
        init = {k: kw.pop(k) for k in split if k in kw}
        obj = make(**init) if callable(make) else make
        out = getattr(obj, meth)(**kw)
        return list(out) if hasattr(out, "__next__") else out

    return call


def est_fit(path: str, init: tuple[str, ...], meth: str = "fit", then: str | None = None, then_kw: dict | None = None):
    """Construct the estimator from the ``init`` keys, call ``meth`` with the rest, then optionally ``then``."""

    def call(kw: dict) -> Any:
        params = {k: kw.pop(k) for k in init if k in kw}
        after = {k: kw.pop(k) for k in list(kw) if k.startswith("then__")}
        est = pub(path)(**params)
        out = getattr(est, meth)(**kw)
        if then:
            tk = dict(then_kw or {})
            tk.update({k[6:]: v for k, v in after.items()})
            out = getattr(est, then)(**tk)
        return out

    return call


ARR_FRAME = [("as-frame", SAME, lambda v, r: pd.DataFrame(np.asarray(v)))]


def _file_table(kind: str):
    from pathlib import Path

    def make(v, r):
        d = Path(scratch_dir())
        p = d / "bad.csv"
        if kind == "dup-columns":
            p.write_text("model,scenario,scenario\nm0,0.5,0.4\nm1,0.2,0.3\n")
        elif kind == "dup-models":
            p.write_text("model,a,b\nm0,0.5,0.4\nm0,0.2,0.3\nm1,0.1,0.2\n")
        elif kind == "text-cells":
            p.write_text("model,a,b\nm0,x,y\nm1,z,w\n")
        elif kind == "inf-cells":
            p.write_text("model,a,b\nm0,inf,0.4\nm1,0.2,0.3\n")
        elif kind == "one-model":
            p.write_text("model,a,b\nm0,0.5,0.4\n")
        elif kind == "long-dup":
            p.write_text("model,item,scenario,score\nm0,i0,s0,1\nm0,i0,s0,0\nm1,i0,s0,1\nm1,i1,s0,0\nm0,i1,s0,1\n")
        elif kind == "nul-id":  # pandas' parser would cut 'i0\0x' to 'i0', the other row's item
            p.write_bytes(b"model,item,score\nm0,i0,1\nm0,i0\x00x,0\nm1,i0,1\n")
        elif kind == "underscore":  # float() reads '1_0' as 10
            p.write_text("model,item,score\nm0,i0,1\nm0,i1,1_0\nm1,i0,1\n")
        elif kind == "no-model-column":  # the first item column would be read as the model ids
            p.write_text("t/0,t/1,t/2\n0.5,0.4,0.1\n0.2,0.3,0.9\n")
        return str(p)

    return make


TABLE_FILES = [(k, FAIL, _file_table(k)) for k in ("dup-columns", "dup-models", "text-cells", "inf-cells", "one-model",
                                                   "long-dup")]
# cells and layouts only the score tables' reader meets: pandas would cut a value at a NUL, float() reads '1_0'
CONTENT_FILES = [(k, FAIL, _file_table(k)) for k in ("nul-id", "underscore", "no-model-column")]


def _tmp_csv(df: pd.DataFrame, name: str = "scores.csv", index: bool = False) -> str:
    from pathlib import Path

    p = Path(scratch_dir()) / name
    df.to_csv(p, index=index)
    return str(p)


def _wide_csv() -> str:
    df = pd.DataFrame(S(), index=[f"m{i}" for i in range(8)], columns=[f"S{j}" for j in range(6)])
    df.index.name = "model"
    return _tmp_csv(df, index=True)


def _openllm_json() -> str:
    """A folder of lm-evaluation-harness results files, 8 models on two tasks (gsm8k logged under two filters)."""
    import json

    d = scratch_dir("openllm-")
    for i, row in enumerate(S()):
        os.makedirs(os.path.join(d, f"m{i}"), exist_ok=True)
        with open(os.path.join(d, f"m{i}", "results_2024-01-01.json"), "w") as f:
            json.dump({"model_name": f"org/m{i}",
                       "results": {"gsm8k": {"exact_match,strict-match": row[0],
                                             "exact_match,flexible-extract": row[1]},
                                   "arc_easy": {"acc,none": row[2], "acc_norm,none": row[3]}}}, f)
    return d


def _long_csv() -> str:
    rm = pub("effstats.responses.ResponseMatrix")(X())
    return _tmp_csv(rm.to_long())


# ------------------------------------------------------------------------------------------ the table
def cases() -> list[Case]:
    C: list[Case] = []
    add = C.append
    B2 = BINARY + SHORT0 + SHORT1  # must match another argument in both axes
    BN = BINARY + SHORT1  # new models: any number of rows, the fitted number of items

    # ---------------------------------------------------------------- responses
    RMP = "effstats.responses.ResponseMatrix"
    add(Case("ResponseMatrix", "responses", fn(RMP), lambda: dict(values=X().astype(float)), [
        A("values", ARRAY + [("above-1", FAIL, UNIT[-2][2]), ("below-0", FAIL, UNIT[-1][2])]),
    ]))
    add(Case("ResponseMatrix(missing,ids,meta)", "responses", fn(RMP), lambda: dict(
        values=X(), missing=np.zeros((NM, NI), bool), model_ids=[f"m{i}" for i in range(NM)],
        item_ids=[f"i{j}" for j in range(NI)],
        models=pd.DataFrame({"size": np.arange(NM)}, index=[f"m{i}" for i in range(NM)]),
        items=pd.DataFrame({"scenario": np.arange(NI) % 3}), kind="binary", nan_as_missing=False), [
        A("missing",
          BINARY + SHORT0 + [("all-missing-row", FAIL,
                              lambda v, r: np.eye(NM, NI, dtype=bool) | (np.arange(NM) == 0)[:, None])],
          skip=("none",)),
        A("model_ids", _ids(NM)), A("item_ids", _ids(NI)),
        A("models",
          [("short", FAIL, lambda v, r: v.iloc[:-1]), ("dup-index", FAIL, lambda v, r: v.set_axis(["m0"] * NM)),
                     ("text", FAIL, lambda v, r: "abc"), ("array", FAIL, lambda v, r: np.zeros((NM, 2))),
                     ("foreign-ids", FAIL, lambda v, r: v.set_axis([f"z{i}" for i in range(NM)]))]),
        A("items", [("short", FAIL, lambda v, r: v.iloc[:-1]), ("text", FAIL, lambda v, r: "abc"),
                    ("dup-index", FAIL, lambda v, r: v.set_axis([0] * NI))]),
        A("kind", OPTION), A("nan_as_missing", FLAG),
    ]))
    add(Case("ResponseMatrix(probabilities)", "responses", fn(RMP),
             lambda: dict(values=PRM().values, probabilities=P(), labels=LAB()), [
        A("probabilities", PROBA + SHORT0, skip=("none",)),
        A("labels", ARRAY + SHORT0 + [("out-of-range", FAIL, lambda v, r: np.where(np.arange(NI) == 0, NC + 5, v)),
                                       ("float", FAIL, lambda v, r: v + 0.5),
                                       ("negative", FAIL, lambda v, r: np.where(np.arange(NI) == 0, -1, v))],
          skip=("none",)),
    ]))
    add(Case("ResponseMatrix(predictions)", "responses", fn(RMP),
             lambda: dict(values=X(), predictions=np.tile(LAB(), (NM, 1))), [
        A("predictions",
          ARRAY + SHORT0 + [("float", FAIL, lambda v, r: v + 0.5), ("negative", FAIL, lambda v, r: v - 10)],
          skip=("none",),
          expect={"ndim+": MAY}),  # (n_models, n_items, 1) is a top-1 list
    ]))
    add(Case("ResponseMatrix.from_probabilities", "responses", fn(RMP + ".from_probabilities"),
             lambda: dict(probabilities=P(), labels=LAB()), [
        A("probabilities", PROBA + SHORT1), A("labels", ARRAY + SHORT0 + [("out-of-range", FAIL, lambda v, r: v + NC)]),
    ]))
    add(Case("ResponseMatrix.from_long", "responses", fn(RMP + ".from_long"),
             lambda: dict(df=RM().to_long(), groups="scenario"), [
        A("df", LONG_FRAME, "score"), A("model", COLUMN), A("item", COLUMN), A("score", COLUMN),
        A("groups", COLUMN[:2] + [("int-list", FAIL, lambda v, r: [3])]),
        A("kind", OPTION),
    ]))
    add(Case("ResponseMatrix.from_wide", "responses", fn(RMP + ".from_wide"), lambda: dict(df=RM().to_frame()), [
        A("df", FRAME), A("kind", OPTION),
    ]))
    add(Case("ResponseMatrix.subset", "responses", lambda kw: RM().subset(**kw),
             lambda: dict(models=[0, 2, 3], items=["i1", "i5"]), [
        A("models", _positions(NM)), A("items", _positions(NI)),
    ]))
    add(Case("ResponseMatrix.group_scores(items)", "responses",
             lambda kw: pub(RMP)(X(), items=kw["items"]).group_scores("scenario"),
             lambda: dict(items=pd.DataFrame({"scenario": np.arange(NI) % 3})), [
        A("items",
          [("nan-label", FAIL,
            lambda v, r: v.assign(scenario=np.where(np.arange(NI) == r.integers(NI), np.nan, v["scenario"])))], "by")]))
    add(Case("ResponseMatrix.from_long(kind)", "responses", fn(RMP + ".from_long"),
             lambda: dict(df=RM().to_long(), kind="binary"), [
        A("df", [("half-score", FAIL, lambda v, r: v.assign(score=np.where(np.arange(len(v)) == 3, 0.5, v["score"])))],
          "score")]))
    add(Case("ResponseMatrix.from_wide(kind)", "responses", fn(RMP + ".from_wide"),
             lambda: dict(df=RM().to_frame(), kind="binary"), [
        A("df",
          [("half", FAIL, lambda v, r: v.where(np.broadcast_to(np.arange(NM)[:, None] != 2, v.shape), 0.5)),
           ("above-1", FAIL, lambda v, r: v + 1.0)])]))
    add(Case("ResponseMatrix.group_scores", "responses", lambda kw: RM().group_scores(**kw),
             lambda: dict(by="scenario"), [A("by", COLUMN)]))
    add(Case("ResponseMatrix.mean_of_means", "responses", lambda kw: RM().mean_of_means(**kw),
             lambda: dict(by="scenario"), [A("by", COLUMN)]))
    add(Case("ResponseMatrix.with_metadata", "responses", lambda kw: RM().with_metadata(**kw),
             lambda: dict(models=pd.DataFrame({"f": np.arange(NM)}, index=[f"m{i}" for i in range(NM)])), [
        A("models",
          [("short", FAIL, lambda v, r: v.iloc[:-1]), ("text", FAIL, lambda v, r: "abc"),
           ("dup-index", FAIL, lambda v, r: v.set_axis(["m0"] * NM)),
                     ("foreign-ids", FAIL, lambda v, r: v.set_axis([f"z{i}" for i in range(NM)]))]),
    ]))
    add(Case("ResponseMatrix.to_long", "responses", lambda kw: RM().to_long(**kw), lambda: dict(dropna=True),
             [A("dropna", FLAG)]))
    add(Case("ResponseMatrix.require_binary", "responses", lambda kw: RM().require_binary(**kw), lambda: dict(name="x"),
             [
        A("name", [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None)])]))

    # ---------------------------------------------------------------- bitpack
    PB = "effstats.bitpack.PackedBinaryMatrix"

    def packed():
        return pub(PB).from_dense(X())

    add(Case("PackedBinaryMatrix", "bitpack", fn(PB), lambda: dict(packed=np.packbits(X()[:, :21], axis=1), n_cols=21),
             [  # 21 columns: 3 padding bits
        A("packed",
          [("int64", FAIL, lambda v, r: v.astype(np.int64)), ("1-D", FAIL, lambda v, r: v.ravel()),
           ("text", FAIL, lambda v, r: "abc"),
                     ("ragged", FAIL, lambda v, r: [[1, 2], [3]]),
                     ("dirty-padding", FAIL, lambda v, r: v | np.uint8(1))]),
        A("n_cols", INT + [("mismatch", FAIL, lambda v, r: v - 9)], skip=("np-int",)),
    ]))
    add(Case("PackedBinaryMatrix.from_dense", "bitpack", fn(PB + ".from_dense"), lambda: dict(dense=X()),
             [A("dense", BINARY)]))
    add(Case("PackedBinaryMatrix.from_row_blocks", "bitpack", fn(PB + ".from_row_blocks"),
             lambda: dict(n_rows=NM, n_cols=NI, make_block=lambda s, e: X()[s:e], block_rows=5), [
        A("n_rows", INT), A("n_cols", INT), A("make_block", CALLABLE), A("block_rows", INT, expect={"huge": MAY}),
    ]))
    add(Case("PackedBinaryMatrix.take_rows", "bitpack", lambda kw: packed().take_rows(**kw), lambda: dict(rows=[0, 3]),
             [
        A("rows", _positions(NM), expect={"duplicate": MAY, "empty": MAY}, skip=("strings",))]))
    add(Case("PackedBinaryMatrix.take_columns", "bitpack", lambda kw: packed().take_columns(**kw),
             lambda: dict(cols=[0, 3]), [
        A("cols", _positions(NI), expect={"duplicate": MAY, "empty": MAY}, skip=("strings",))]))
    add(Case("PackedBinaryMatrix.permute_columns", "bitpack", lambda kw: packed().permute_columns(**kw),
             lambda: dict(order=np.arange(NI)[::-1], block_rows=5), [
        A("order",
          [("duplicate", FAIL, lambda v, r: np.zeros(NI, int)), ("out-of-range", FAIL, lambda v, r: v + 1),
           ("float", FAIL, lambda v, r: v + 0.5),
                    ("short", FAIL, lambda v, r: v[:-1]), ("text", FAIL, lambda v, r: "abc"),
                    ("nan", FAIL, lambda v, r: np.full(NI, np.nan))]),
        A("block_rows", INT, expect={"huge": MAY}),
    ]))
    add(Case("PackedBinaryMatrix.col_sums", "bitpack", lambda kw: packed().col_sums(**kw),
             lambda: dict(weights=np.ones(NM), block_bytes=2), [
        A("weights", REAL + SHORT0, skip=("none",)), A("block_bytes", INT, expect={"huge": MAY}),
    ]))
    add(Case("PackedBinaryMatrix.col_sums(n_threads)", "bitpack", lambda kw: packed().col_sums(**kw),
             lambda: dict(n_threads=1), [
        A("n_threads", INT, skip=("none",), expect={"huge": MAY})]))
    add(Case("PackedBinaryMatrix.row_sums", "bitpack", lambda kw: packed().row_sums(**kw), lambda: dict(block_rows=5),
             [A("block_rows", INT, expect={"huge": MAY})]))
    add(Case("PackedBinaryMatrix.row_blocks", "bitpack", lambda kw: list(packed().row_blocks(**kw)),
             lambda: dict(block_rows=5), [A("block_rows", INT, expect={"huge": MAY})]))

    # ---------------------------------------------------------------- splits
    add(Case("random_split", "splits", fn("effstats.splits.random_split"),
             lambda: dict(responses=RM(), test_size=0.25, rng=0), [
        A("responses",
          [("text", FAIL, lambda v, r: "abc"), ("one", FAIL, lambda v, r: 1), ("float", FAIL, lambda v, r: 12.0),
                        ("bool", FAIL, lambda v, r: True), ("none", FAIL, lambda v, r: None),
                        ("negative", FAIL, lambda v, r: -5)]),
        A("test_size", FRACTION + [("count-too-big", FAIL, lambda v, r: NM), ("zero-int", FAIL, lambda v, r: 0)]),
        A("rng", RNG),
    ]))
    add(Case("chronological_split", "splits", fn("effstats.splits.chronological_split"),
             lambda: dict(responses=RM(), cutoff="2020-06-15"), [
        A("cutoff",
          [("garbage", FAIL, lambda v, r: "not a date"), ("before-all", FAIL, lambda v, r: "1990-01-01"),
           ("none", FAIL, lambda v, r: None),
                     ("list", FAIL, lambda v, r: [v])]),
        A("date", COLUMN), A("responses", [("text", FAIL, lambda v, r: "abc"), ("array", FAIL, lambda v, r: X())]),
    ]))
    add(Case("chronological_split(n_newest)", "splits", fn("effstats.splits.chronological_split"),
             lambda: dict(responses=RM(), n_newest=3), [
        A("n_newest", INT + [("all", FAIL, lambda v, r: NM)])]))
    add(Case("performance_split", "splits", fn("effstats.splits.performance_split"),
             lambda: dict(responses=RM(), top_fraction=0.25, gap=0.1), [
        A("top_fraction", FRACTION), A("gap", [x for x in FRACTION if x[0] not in ("zero",)], expect={"one": FAIL}),
        A("responses", [("text", FAIL, lambda v, r: "abc"), ("array", FAIL, lambda v, r: X())]),
    ]))
    add(Case("binned_split", "splits", fn("effstats.splits.binned_split"),
             lambda: dict(responses=RM(), source_size=0.5, n_bins=3, rng=0), [
        A("source_size", FRACTION + [("count-too-big", FAIL, lambda v, r: NM), ("zero-int", FAIL, lambda v, r: 0)]),
        A("n_bins", INT, skip=("huge",)), A("rng", RNG),
        A("responses", [("text", FAIL, lambda v, r: "abc"), ("array", FAIL, lambda v, r: X())]),
    ]))
    add(Case("ModelSplit.apply", "splits",
             lambda kw: pub("effstats.splits.ModelSplit")(kw.pop("source"), kw.pop("target")).apply(**kw),
             lambda: dict(source=np.arange(0, 9), target=np.arange(9, NM), responses=RM()), [
        A("source", _positions(NM) + [("overlap", FAIL, lambda v, r: np.arange(0, 10))]),
        A("target", _positions(NM)),
        A("responses", [("text", FAIL, lambda v, r: "abc"), ("array", FAIL, lambda v, r: X())]),
    ]))

    # ---------------------------------------------------------------- datasets
    SIM = "effstats.datasets.simulate_responses"
    simkw = lambda: dict(n_models=6, n_items=10, n_dims=1, ability=(0.0, 1.0), difficulty=(0.0, 1.0),
                         discrimination=None,
                         n_clusters=1, cluster_spread=1.0, rng=0)
    spec_bad = [("nan", FAIL, lambda v, r: (np.nan, 1.0)), ("neg-sd", FAIL, lambda v, r: (0.0, -1.0)),
                ("text", FAIL, lambda v, r: "abc"),
                ("triple", FAIL, lambda v, r: (0.0, 1.0, 2.0)), ("inf", FAIL, lambda v, r: (0.0, np.inf)),
                ("complex", FAIL, lambda v, r: (1j, 1.0)), ("short-array", FAIL, lambda v, r: np.zeros(3)),
                ("nan-array", FAIL, lambda v, r: np.full(10, np.nan)),
                ("callable-shape", FAIL, lambda v, r: lambda g, shape: np.zeros(2)),
                ("callable-nan", FAIL, lambda v, r: lambda g, shape: np.full(shape, np.nan)),
                ("ragged", FAIL, lambda v, r: [[0.0], [0.0, 1.0]])]
    add(Case("simulate_responses", "datasets", fn(SIM), simkw, [
        A("n_models", INT, skip=("huge",)), A("n_items", INT, skip=("huge",)), A("n_dims", INT, skip=("huge",)),
        A("ability", spec_bad, skip=("nan-array",)), A("difficulty", spec_bad),
        A("discrimination", spec_bad + [("negative", FAIL, lambda v, r: -np.ones(10))]),
        A("n_clusters", INT, skip=("huge",)),
        A("cluster_spread", POSITIVE, expect={"zero": MAY}),
        A("rng", RNG),  # clusters of models; a zero spread is documented
    ]))
    def truth():
        return fn(SIM)(dict(n_models=6, n_items=10, rng=0, return_params=True))[1]

    for meth in ("logits", "probability"):
        add(Case(f"IRTParameters.{meth}", "datasets", lambda kw, meth=meth: getattr(truth(), meth)(**kw),
                 lambda: dict(models=[0, 3]), [A("models", _positions(6), expect={"duplicate": MAY, "empty": MAY})]))
    add(Case("simulate_responses(n_classes)", "datasets", fn(SIM),
             lambda: dict(n_models=6, n_items=10, n_classes=3, rng=0), [
        A("n_classes", INT + [("one", FAIL, lambda v, r: 1)], skip=("huge",)),
    ]))
    add(Case("simulate_packed_responses", "datasets", fn("effstats.datasets.simulate_packed_responses"),
             lambda: dict(n_models=6, n_items=10, rng=0, block_rows=4, n_jobs=1), [
        A("n_models", INT, skip=("huge",)), A("n_items", INT, skip=("huge",)),
        A("block_rows", INT, expect={"huge": MAY}, skip=("none",)),
        A("n_jobs", INT, skip=("huge",)), A("rng", RNG),
    ]))
    add(Case("load_lifelong_digits", "datasets", fn("effstats.datasets.load_lifelong_digits"), None, [
        A("path", files(".npz"))]))
    add(Case("make_lifelong_digits", "datasets",
             lambda kw: pub("effstats.datasets.make_lifelong_digits")(**{"n_models": 2, "n_test": 20, **kw}), None, [
        A("rng", RNG + [("none", FAIL, lambda v, r: None)]), A("n_models", INT, skip=("huge", "np-int")),
        A("n_test", INT, skip=("huge", "np-int")),
        A("domains",
          [("unknown", FAIL, lambda v, r: ["nope"]), ("empty", FAIL, lambda v, r: []), ("zero", FAIL, lambda v, r: 0),
                      ("float", FAIL, lambda v, r: 1.5), ("dup", FAIL, lambda v, r: ["clean", "clean"])]),
        A("models",
          [("out-of-range", FAIL, lambda v, r: [0, 10**6]), ("empty", FAIL, lambda v, r: []),
           ("text", FAIL, lambda v, r: ["a"]),
                     ("dup", FAIL, lambda v, r: [0, 0])]),
        A("n_jobs", INT, skip=("huge", "np-int")),
    ]))
    add(Case("read_scores_csv", "datasets", fn("effstats.datasets.read_scores_csv"), lambda: dict(path=_long_csv()), [
        A("path",
          files(".csv", ("missing", "directory", "empty", "garbage", "text", "dup-columns", "dup-rows")) + TABLE_FILES
          + CONTENT_FILES,
          # one model is a valid ResponseMatrix; repeated rows are read as the last one, with a warning (duplicates=)
          expect={"one-model": MAY, "dup-rows": MAY, "dup-models": MAY, "long-dup": MAY}),
        A("format", OPTION), A("model", COLUMN[:2]), A("score", COLUMN[:2]), A("kind", OPTION),
    ]))
    add(Case("read_scores_frame", "datasets", fn("effstats.datasets.read_scores_frame"),
             lambda: dict(frame=pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q1", "q2", "q1", "q2"],
                                              "score": [1.0, 0.0, 0.5, 1.0]})), [
        A("frame", [("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None),
                    ("array", FAIL, lambda v, r: v.to_numpy()), ("no-columns", FAIL, lambda v, r: pd.DataFrame()),
                    ("percent", FAIL, lambda v, r: v.assign(score=v["score"] * 100)),
                    ("nan-score", MAY, lambda v, r: v.assign(score=[np.nan, 0.0, 0.5, 1.0]))]),
        A("format", OPTION), A("kind", OPTION), A("name", [("empty", FAIL, lambda v, r: ""),
                                                          ("int", FAIL, lambda v, r: 3)]),
    ]))
    add(Case("read_scores_csv(wide)", "datasets", fn("effstats.datasets.read_scores_csv"),
             lambda: dict(path=_wide_csv(), format="wide"), [
        A("path", TABLE_FILES[:5], expect={"one-model": MAY, "dup-models": MAY})]))
    add(Case("read_lm_eval_samples", "datasets", fn("effstats.datasets.read_lm_eval_samples"), None, [
        A("path_or_paths", files(".jsonl", ("missing", "directory", "empty", "garbage", "jsonl-garbage")) + [
            ("int", FAIL, lambda v, r: 3), ("empty-list", FAIL, lambda v, r: []),
            ("empty-dict", FAIL, lambda v, r: {})]),
    ]))
    add(Case("load_leaderboard", "datasets", fn("effstats.datasets.load_leaderboard"), lambda: dict(name="helm"), [
        A("name", OPTION + [("none", FAIL, lambda v, r: None)]), A("as_frame", FLAG)]))
    add(Case("load_mmlu", "datasets", fn("effstats.datasets.load_mmlu"), lambda: dict(duplicates="suffix"),
             [A("duplicates", OPTION)]))
    add(Case("load_helm", "datasets", fn("effstats.datasets.load_helm"), lambda: dict(as_frame=False),
             [A("as_frame", FLAG)]))
    add(Case("data_root", "datasets", fn("effstats.datasets.data_root"), None, [
        A("root", files("", ("missing",)) + [("int", FAIL, lambda v, r: 3), ("file", FAIL, lambda v, r: __file__)])]))
    for loader, probe in [("load_imagenet_predictions", "imagenet/imagenet_val.npz"),
                          ("load_cifar10_predictions", "cifar10/cifar10_test.npz"),
                          ("load_alpacaeval", "alpacaeval/alpacaeval2_weighted_gpt4turbo.npz")]:
        add(Case(f"{loader}(corrupt archive)", "datasets", fn("effstats.datasets." + loader), None, [
            A("root", [(k, FAIL, (lambda k, probe: lambda v, r: _bad_archive_root(k, probe, r))(k, probe))
                       for k in ("empty", "garbage", "pickle-npz", "truncated-npz", "wrong-npz", "text")])]))
    for loader, extra in [("load_imagenet_predictions", {}), ("load_cifar10_predictions", {}), ("load_alpacaeval", {})]:
        args = [A("root", files("", ("missing", "empty", "garbage")) + [("int", FAIL, lambda v, r: 3)])]
        if loader != "load_alpacaeval":
            args.append(A("domains",
                          [("unknown", FAIL, lambda v, r: ["nope"]), ("empty", FAIL, lambda v, r: []),
                           ("int", FAIL, lambda v, r: 3),
                                      ("dup", FAIL, lambda v, r: ["a", "a"])]))
        if _have_data():  # model names are checked against the archives, which a clean clone may lack
            args.append(A("models",
                          [("empty", FAIL, lambda v, r: []), ("unknown", FAIL, lambda v, r: ["no-such-model"]),
                           ("int", FAIL, lambda v, r: 3)]))
        if loader == "load_alpacaeval":
            args.append(A("outcome", OPTION))
        if loader == "load_imagenet_predictions":
            args.append(A("correct", OPTION))
        add(Case(loader, "datasets", fn("effstats.datasets." + loader), None, args))

    # ---------------------------------------------------------------- sortsearch
    SS = "effstats.sortsearch."
    for f in ("item_sums", "model_sums", "sort_by_sum"):
        add(Case(f, "sortsearch", fn(SS + f), lambda: dict(responses=X()),
                 [A("responses", BINARY + [("score-rm", FAIL, lambda v, r: pub(RMP)(X() * 0.5))])]))
    add(Case("sort_by_confidence_sum", "sortsearch", fn(SS + "sort_by_confidence_sum"),
             lambda: dict(confidences=PRM().true_class_probability()), [
        A("confidences", UNIT)]))
    add(Case("recursive_sort", "sortsearch", fn(SS + "recursive_sort"), lambda: dict(responses=X(), depth=2), [
        A("responses", BINARY), A("depth", INT, skip=("huge",), expect={"zero": MAY})]))
    add(Case("sort_objective", "sortsearch", fn(SS + "sort_objective"),
             lambda: dict(responses=X(), order=np.arange(NI)), [
        A("responses", BINARY),
        A("order", [("duplicate", FAIL, lambda v, r: np.zeros(NI, int)), ("short", FAIL, lambda v, r: v[:-1]),
                                            ("float", FAIL, lambda v, r: v + 0.5),
                                            ("out-of-range", FAIL, lambda v, r: v + 1),
                                            ("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)])]))
    add(Case("dp_search", "sortsearch", fn(SS + "dp_search"), lambda: dict(sorted_responses=X()),
             [A("sorted_responses", BINARY, skip=("ndim-",))]))
    for f in ("uniform_positions", "listing_uniform_positions", "random_positions"):
        add(Case(f, "sortsearch", fn(SS + f),
                 (lambda f: lambda: dict(n=NI, budget=5, **({"rng": 0} if f == "random_positions" else {})))(f),
             [A("n", INT, skip=("huge",)), A("budget", INT)]))
    add(Case("random_positions(rng)", "sortsearch", fn(SS + "random_positions"), lambda: dict(n=NI, budget=5, rng=0),
             [A("rng", RNG)]))
    SSE = SS + "SortSearch"
    add(Case("SortSearch.fit", "sortsearch", est_fit(SSE, ("sort", "sampling", "depth", "random_state")),
             lambda: dict(responses=X(), sort="sum", sampling="uniform", depth=2, random_state=0), [
        A("responses",
          BINARY + [("score-rm", FAIL, lambda v, r: pub(RMP)(X() * 0.5)),
                    ("missing-rm", FAIL,
                     lambda v, r: pub(RMP)(np.where(np.eye(NM, NI) > 0, np.nan, X()), nan_as_missing=True))]),
        A("sort", OPTION), A("sampling", OPTION), A("random_state", RNG),
    ]))
    add(Case("SortSearch(recursive).fit", "sortsearch", est_fit(SSE, ("sort", "depth")),
             lambda: dict(responses=X(), sort="recursive", depth=2), [
        A("depth", INT, skip=("huge",), expect={"zero": MAY})]))
    add(Case("SortSearch.select", "sortsearch", lambda kw: fitted(SSE).select(**kw), lambda: dict(budget=5),
             [A("budget", INT)]))
    add(Case("SortSearch.predict", "sortsearch", lambda kw: fitted_once(SSE).predict(**kw),
             lambda: dict(responses=X()[:3, :5], items=np.arange(5)), [
        A("responses", BN), A("items", _positions(NI))]))
    add(Case("SortSearch.simulate", "sortsearch", lambda kw: fitted_once(SSE).simulate(**kw),
             lambda: dict(responses=X()[:4], budget=6), [
        A("responses", BN + [("score-rm", FAIL, lambda v, r: pub(RMP)(X()[:4] * 0.5))]), A("budget", INT)]))
    add(Case("SortSearch.budget_curve", "sortsearch", lambda kw: fitted_once(SSE).budget_curve(**kw),
             lambda: dict(responses=X()[:4], budgets=[3, 6]), [
        A("responses", BN), A("budgets", _sizes(NI), expect={"scalar": MAY})]))
    add(Case("SortSearch.insert", "sortsearch", lambda kw: (lambda e: (e.select(5), e.insert(**kw))[1])(fitted(SSE)),
             lambda: dict(responses=X()[:2, :5]), [A("responses", BN), A("items", _positions(NI), skip=("empty",))]))
    add(Case("SortSearch.evaluate", "sortsearch", lambda kw: fitted(SSE).evaluate(**kw),
             lambda: dict(evaluate_fn=lambda items: X()[:3][:, items], budget=5),
             [A("evaluate_fn", CALLABLE), A("budget", INT)]))
    add(Case("SearchResult.evaluate", "sortsearch", lambda kw: fitted_once(SSE).simulate(X()[:4], 6).evaluate(**kw),
             lambda: dict(true_responses=X()[:4]), [
        A("true_responses", B2)]))
    add(Case("SearchResult.correctness", "sortsearch",
             lambda kw: fitted_once(SSE).simulate(X()[:4], 6).correctness(**kw), lambda: dict(rows=[0, 1]), [
        A("rows", _positions(4), expect={"duplicate": MAY, "empty": MAY}, skip=("strings",))]))
    add(Case("SampleInserter.insert_samples", "sortsearch",
             lambda kw: (lambda e: (e.fit(X()), e.select(4), e.insert_samples(**kw))[2])(pub(SS + "SampleInserter")()),
             lambda: dict(responses=X()[:4, :2].T.copy()), [A("responses", BN)]))
    CNE = SS + "CopyNearestExpand"
    add(Case("CopyNearestExpand.fit", "sortsearch", est_fit(CNE, ("random_state",)),
             lambda: dict(responses=X(), random_state=0), [
        A("responses", BINARY), A("random_state", RNG)]))
    add(Case("CopyNearestExpand.select", "sortsearch", lambda kw: fitted(CNE).select(**kw), lambda: dict(budget=5),
             [A("budget", INT)]))
    add(Case("CopyNearestExpand.simulate", "sortsearch", lambda kw: fitted(CNE).simulate(**kw),
             lambda: dict(responses=X()[:4], budget=6), [
        A("responses", BN), A("budget", INT)]))
    add(Case("CopyNearestExpand.predict", "sortsearch",
             lambda kw: (lambda e: (e.select(5), e.predict(**kw))[1])(fitted(CNE)),
             lambda: dict(responses=X()[:3, :5]), [A("responses", BN), A("items", _positions(NI), skip=("empty",))]))

    # ---------------------------------------------------------------- metrics
    MT = "effstats.metrics."
    Y = lambda: X()[:4]
    A4 = lambda: np.roll(X()[:4], 1, axis=1)
    for f in ("mae", "e_agg", "e_rand", "cohen_kappa", "sample_metrics"):
        ex = {"half": MAY} if f in ("mae", "e_agg") else {}  # documented for scores in [0, 1] too
        add(Case(f, "metrics", fn(MT + f), lambda: dict(a=A4(), y=Y()), [A("a", B2, expect=ex), A("y", B2, expect=ex)]))
    add(Case("cohen_kappa(undefined)", "metrics", fn(MT + "cohen_kappa"), lambda: dict(a=A4(), y=Y(), undefined=1.0),
             [A("undefined", FINITE)]))
    add(Case("aggregate_counterexample", "metrics", fn(MT + "aggregate_counterexample"), lambda: dict(a=X()[:2]),
             [A("a", BINARY, expect={"ndim-": MAY})]))
    add(Case("oracle_count_prediction", "metrics", fn(MT + "oracle_count_prediction"),
             lambda: dict(a=X()[:4], order=np.arange(NI)), [
        A("a", BINARY),
        A("order",
          [("duplicate", FAIL, lambda v, r: np.zeros(NI, int)), ("short", FAIL, lambda v, r: v[:-1]),
           ("float", FAIL, lambda v, r: v + 0.5),
                                    ("out-of-range", FAIL, lambda v, r: v + 1), ("text", FAIL, lambda v, r: "abc")])]))
    add(Case("decompose_errors", "metrics", fn(MT + "decompose_errors"),
             lambda: dict(a=A4(), y=Y(), order=np.arange(NI)), [
        A("a", B2), A("y", B2),
        A("order", [("duplicate", FAIL, lambda v, r: np.zeros(NI, int)), ("short", FAIL, lambda v, r: v[:-1]),
                                            ("out-of-range", FAIL, lambda v, r: v + 1),
                                            ("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)])]))
    XS = lambda: np.array([10.0, 20, 40, 80, 160, 320])
    YS = lambda: np.array([0.30, 0.22, 0.15, 0.11, 0.08, 0.06])
    for f in ("fit_exponential", "fit_power_law"):
        add(Case(f, "metrics", fn(MT + f), lambda: dict(x=XS(), y=YS()), [
            A("x",
              REAL + SHORT0 + [("non-positive", FAIL, lambda v, r: v - 100)] if f == "fit_power_law"
              else REAL + SHORT0),
            A("y", REAL + SHORT0)]))
    add(Case("CurveFit.predict", "metrics", lambda kw: pub(MT + "fit_power_law")(XS(), YS()).predict(**kw),
             lambda: dict(x=np.array([5.0, 500.0])), [
        A("x", REAL, skip=("ndim-", "empty"))]))
    add(Case("CurveFit.confidence_interval", "metrics",
             lambda kw: pub(MT + "fit_power_law")(XS(), YS()).confidence_interval(**kw),
             lambda: dict(confidence_level=0.9), [A("confidence_level", FRACTION)]))
    add(Case("accuracy_correlation", "metrics", fn(MT + "accuracy_correlation"),
             lambda: dict(estimated=np.linspace(0, 1, 6), true=np.linspace(0, 1, 6) ** 2), [
        A("estimated", REAL + SHORT0 + [("constant", MAY, lambda v, r: np.ones(6))]), A("true", REAL + SHORT0)]))
    add(Case("model_correlation_matrix", "metrics", fn(MT + "model_correlation_matrix"), lambda: dict(responses=X()),
             [A("responses", BINARY)]))

    # ---------------------------------------------------------------- disco
    DC = "effstats.disco."
    add(Case("pds", "disco", fn(DC + "pds"), lambda: dict(probabilities=P()), [A("probabilities", PROBA)]))
    add(Case("jsd", "disco", fn(DC + "jsd"), lambda: dict(probabilities=P(), base=2.0),
             [A("probabilities", PROBA), A("base", POSITIVE + [("one", FAIL, lambda v, r: 1.0)])]))
    PRED = lambda: np.argmax(P(), axis=2)
    for f in ("pds_from_predictions", "jsd_from_predictions"):
        add(Case(f, "disco", fn(DC + f), lambda: dict(predictions=PRED(), n_classes=NC), [
            A("predictions", ARRAY + [("float", FAIL, lambda v, r: v + 0.5), ("negative", FAIL, lambda v, r: v - 10)],
              expect={"ndim+": MAY}),  # top-1 as (., ., 1)
            A("n_classes", INT + [("too-small", FAIL, lambda v, r: 1)], skip=("none", "huge"))]))
    add(Case("pds_jsd_bounds", "disco", fn(DC + "pds_jsd_bounds"),
             lambda: dict(pds_unnormalized=pub(DC + "pds")(P(), normalize=False), n_models=NM), [
        A("pds_unnormalized", REAL + [("negative", FAIL, lambda v, r: -np.abs(v) - 1)], expect={"ndim-": MAY}),
        A("n_models", INT + [("one", FAIL, lambda v, r: 1)], skip=("huge",))]))
    add(Case("disagreement", "disco", fn(DC + "disagreement"), lambda: dict(outputs=P(), measure="pds", top_k=1), [
        A("outputs", PROBA), A("measure", OPTION), A("top_k", INT, skip=("huge",))]))
    add(Case("select_top_k", "disco", fn(DC + "select_top_k"),
             lambda: dict(scores=np.linspace(0, 1, NI), k=5, groups=np.arange(NI) % 3, rng=0), [
        A("scores", REAL + SHORT0, skip=("none",)), A("k", INT),
        A("groups", [("short", FAIL, lambda v, r: v[:-1]), ("2-D", FAIL, lambda v, r: v[None]),
                                                                        ("nan", FAIL,
                                                                         lambda v, r: np.where(np.arange(NI) == 0,
                                                                                               np.nan, v))]),
        A("rng", RNG)]))
    add(Case("select_random", "disco", fn(DC + "select_random"), lambda: dict(n_items=NI, k=5, rng=0),
             [A("n_items", INT, skip=("huge",)), A("k", INT), A("rng", RNG)]))
    add(Case("difficulty_regressor", "disco", fn(DC + "difficulty_regressor"), lambda: dict(C=1.0), [A("C", POSITIVE)]))
    add(Case("make_predictor", "disco", fn(DC + "make_predictor"), lambda: dict(name="knn", n_neighbors=2),
             [A("name", OPTION), A("n_neighbors", INT, skip=("huge",))]))
    DIS = DC + "DISCO"
    add(Case("DISCO.fit", "disco",
             est_fit(DIS,
                     ("n_items", "selection", "predictor", "signature", "pca", "top_k", "n_neighbors", "random_state")),
             lambda: dict(source_outputs=P(), labels=LAB(), n_items=5, predictor="knn", pca=None, random_state=0), [
        A("source_outputs", PROBA), A("n_items", INT), A("selection", OPTION), A("predictor", OPTION),
        A("signature", OPTION),
        A("pca", INT, skip=("none",), expect={"huge": MAY}), A("top_k", INT, skip=("huge",)), A("n_neighbors", INT),
        A("random_state", RNG)]))
    add(Case("DISCO.fit(scores)", "disco", est_fit(DIS, ("n_items", "predictor", "pca")),
             lambda: dict(source_outputs=P(), source_scores=PRM().accuracy().to_numpy(), labels=LAB(), n_items=5,
                          predictor="knn", pca=None), [
        A("source_scores", UNIT + SHORT0, skip=("none",), expect={"above-1": MAY, "below-0": MAY}),
        A("labels", ARRAY + SHORT0 + [("out-of-range", FAIL, lambda v, r: v + NC)], skip=("none",))]))
    add(Case("DISCO.predict", "disco",
             lambda kw: fitted_once(DIS, PRM(), n_items=5, predictor="knn", pca=None).predict(**kw),
             lambda: dict(target_outputs=P()[:3]), [
        # bare arrays may hold the selected items only
        A("target_outputs", PROBA + [("selected-only", MAY, lambda v, r: v[:, :5])])]))
    add(Case("DISCO.predict_interval", "disco",
             lambda kw: fitted_once(DIS, PRM(), n_items=5, predictor="knn", pca=None).predict_interval(**kw),
             lambda: dict(target_outputs=P()[:3], n_splits=3), [
        A("target_outputs", PROBA + [("selected-only", MAY, lambda v, r: v[:, :5])]),
        A("n_splits", INT, skip=("huge",))]))
    add(Case("AIPW.fit", "disco", est_fit(DC + "AIPW", ("n_items", "n_folds", "random_state")),
             lambda: dict(source_outputs=X(), n_items=8, n_folds=3, random_state=0), [
        A("source_outputs", BINARY, expect={"half": MAY}), A("n_items", INT), A("n_folds", INT),
        A("random_state", RNG)]))
    add(Case("AIPW.predict_interval", "disco",
             lambda kw: fitted_once(DC + "AIPW", None, n_items=8, n_folds=3).predict_interval(**kw),
             lambda: dict(target_outputs=X()[:3]), [A("target_outputs", BN, expect={"half": MAY})]))
    add(Case("StratifiedAIPW.fit", "disco",
             est_fit(DC + "StratifiedAIPW", ("n_items", "n_strata", "allocation", "n_folds", "n_components", "penalty",
                                             "power_tuning", "random_state")),
             lambda: dict(source_outputs=X(), n_items=8, n_strata=2, allocation="mixed", n_folds=3, n_components=1,
                          penalty=1.0, power_tuning=False, random_state=0), [
        A("source_outputs", BINARY, expect={"half": MAY}), A("n_items", INT), A("n_strata", INT),
        A("allocation", OPTION), A("n_folds", INT), A("n_components", INT, skip=("zero",)), A("penalty", POSITIVE),
        A("power_tuning", FLAG), A("random_state", RNG)]))
    add(Case("StratifiedAIPW.predict_interval", "disco",
             lambda kw: fitted_once(DC + "StratifiedAIPW", None, n_items=8, n_strata=2, n_folds=3).predict_interval(
                 **kw),
             lambda: dict(target_outputs=X()[:3]), [A("target_outputs", BN, expect={"half": MAY})]))
    add(Case("MRMR.fit", "disco", est_fit(DC + "MRMR", ("n_items", "scheme", "regressor", "degree", "n_neighbors")),
             lambda: dict(source_outputs=X(), n_items=5), [
        A("source_outputs", BINARY, expect={"half": MAY}), A("n_items", INT), A("scheme", OPTION),
        A("regressor", OPTION),
        A("degree", INT), A("n_neighbors", INT)]))
    add(Case("RandomLearn.fit", "disco",
             est_fit(DC + "RandomLearn", ("n_items", "regressor", "degree", "random_state")),
             lambda: dict(source_outputs=X(), n_items=5, random_state=0), [
        A("source_outputs", BINARY, expect={"half": MAY}), A("n_items", INT), A("regressor", OPTION), A("degree", INT),
        A("random_state", RNG)]))
    add(Case("select_mrmr", "disco", fn(DC + "select_mrmr"), lambda: dict(responses=X().astype(float), n_items=5), [
        A("responses", BINARY, expect={"half": MAY}), A("n_items", INT), A("scheme", OPTION), A("n_neighbors", INT)]))
    add(Case("mutual_information_relevance", "disco", fn(DC + "mutual_information_relevance"),
             lambda: dict(responses=X().astype(float), scores=X().mean(axis=1)), [
        A("responses", BINARY, expect={"half": MAY}), A("scores", REAL + SHORT0), A("n_neighbors", INT)]))
    for est in ("RandomDirect", "AnchorCorr", "StratifiedHT", "SortSearchDirect"):
        extra = {"n_strata": 2} if est == "StratifiedHT" else {}
        # scores in [0, 1] are valid outputs except for Sort & Search
        half = {"half": MAY} if est != "SortSearchDirect" else {}
        add(Case(f"{est}.fit", "disco", est_fit(DC + est, ("n_items", "n_strata")),
                 (lambda extra: lambda: dict(source_outputs=X(), n_items=5, **extra))(extra), [
            A("source_outputs", BINARY, expect=half), A("n_items", INT)] + ([A("n_strata", INT)] if extra else [])))
        add(Case(f"{est}.predict", "disco",
                 (lambda est, extra: lambda kw: fitted_once(DC + est, None, n_items=5, **extra).predict(**kw))(est,
                                                                                                               extra),
                 lambda: dict(target_outputs=X()[:3]),
                 [A("target_outputs", BN, expect={"half": MAY})]))  # only the selected items are read
    add(Case("prediction_metrics", "disco", fn(DC + "prediction_metrics"),
             lambda: dict(true_scores=np.linspace(0, 1, 6), estimates=np.linspace(0, 1, 6) ** 2), [
        A("true_scores", REAL + SHORT0), A("estimates", REAL + SHORT0)]))
    add(Case("evaluate_split", "disco", fn(DC + "evaluate_split"),
             lambda: dict(method=pub(DC + "RandomDirect")(5), responses=RM(), split=SPLIT()), [
        A("method", [("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)]),
        A("split",
          [("out-of-range", FAIL, lambda v, r: pub("effstats.splits.ModelSplit")(np.arange(3), np.array([50]))),
                    ("overlap", FAIL, lambda v, r: pub("effstats.splits.ModelSplit")(np.arange(6), np.arange(5, NM))),
                    ("text", FAIL, lambda v, r: "abc")]),
        A("scores",
          [("short", FAIL, lambda v, r: np.zeros(NM - 1)), ("nan", FAIL, lambda v, r: np.full(NM, np.nan))])]))
    add(Case("run_protocol", "disco", fn(DC + "run_protocol"),
             lambda: dict(methods={"r": pub(DC + "RandomDirect")(5)}, responses=RM(), splits=SPLIT(), seeds=[0],
                          n_jobs=1), [
        A("methods",
          [("empty", FAIL, lambda v, r: {}), ("text", FAIL, lambda v, r: "abc"),
           ("bad-value", FAIL, lambda v, r: {"r": 3})]),
        A("splits", [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: "abc")]),
        A("seeds",
          [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: ["a"]), ("float", FAIL, lambda v, r: [0.5]),
           ("dup", FAIL, lambda v, r: [0, 0])]),
        A("n_jobs", INT, expect={"huge": MAY})]))

    # ---------------------------------------------------------------- irt
    IRT = "effstats.irt.IRT2PL"
    add(Case("IRT2PL.fit", "irt",
             est_fit(IRT, ("n_dims", "method", "prior_sd_a", "prior_sd_b", "max_iter", "tol", "n_jobs",
                           "random_state")),
             lambda: dict(responses=X(), method="jml", max_iter=20, random_state=0), [
        A("responses",
          BINARY + [("missing-rm", MAY,
                     lambda v, r: pub(RMP)(np.where(np.eye(NM, NI) > 0, np.nan, X()), nan_as_missing=True))]),
        A("n_dims", INT, skip=("huge",)), A("method", OPTION), A("prior_sd_a", POSITIVE), A("prior_sd_b", POSITIVE),
        A("max_iter", INT, skip=("huge",)),
        A("tol", POSITIVE), A("n_jobs", INT, expect={"huge": MAY}), A("random_state", RNG)]))
    add(Case("IRT2PL.abilities", "irt", lambda kw: fitted_once(IRT, method="jml", max_iter=20).abilities(**kw),
             lambda: dict(responses=X()[:3, :5], items=np.arange(5), max_iter=20, method="map"), [
        A("responses", BN), A("items", _positions(NI) + [("shape-mismatch", FAIL, lambda v, r: np.arange(6))]),
        A("max_iter", INT, skip=("huge",)),
        A("method", OPTION)]))
    add(Case("IRT2PL.predict_proba", "irt", lambda kw: fitted_once(IRT, method="jml", max_iter=20).predict_proba(**kw),
             lambda: dict(theta=np.zeros((2, 1)), items=np.arange(4)),
             [A("theta", REAL + [("wrong-dims", FAIL, lambda v, r: np.zeros((2, 3)))], skip=("none",)),
                                                                       A("items", _positions(NI))]))
    AT = "effstats.irt.AdaptiveTest"
    _bank = lambda: fitted_once(IRT, None, max_iter=50)  # noqa: E731
    AT_INIT = ("target_se", "max_items", "prior_sd", "n_grid")

    def _at(kw, meth, *args):
        t = pub(AT)(_bank(), **{k: kw.pop(k) for k in AT_INIT if k in kw})
        return getattr(t, meth)(*args, **kw)
    add(Case("AdaptiveTest.run", "irt", lambda kw: _at(kw, "run"),
             lambda: dict(answers=X()[0].astype(int), target_se=0.5), [
        A("answers",
          [("short", FAIL, lambda v, r: v[:-1]), ("twos", FAIL, lambda v, r: v + 2), ("text", FAIL, lambda v, r: "abc"),
                      ("none", FAIL, lambda v, r: None), ("2-D", FAIL, lambda v, r: v[None])]),
        A("target_se", POSITIVE), A("max_items", INT), A("prior_sd", POSITIVE), A("n_grid", INT)]))
    add(Case("AdaptiveTest.record", "irt", lambda kw: _at(kw, "record"), lambda: dict(item=3, response=1), [
        A("item",
          [("negative", FAIL, lambda v, r: -1), ("huge", FAIL, lambda v, r: 10**6), ("float", FAIL, lambda v, r: 2.5),
                   ("str", FAIL, lambda v, r: "3"), ("none", FAIL, lambda v, r: None)]),
        A("response",
          [("two", FAIL, lambda v, r: 2), ("text", FAIL, lambda v, r: "1"), ("none", FAIL, lambda v, r: None),
                       ("half", FAIL, lambda v, r: 0.5)])]))
    add(Case("AdaptiveTest.information", "irt", lambda kw: _at(kw, "information"), lambda: dict(theta=0.5), [
        A("theta", [("nan", FAIL, lambda v, r: float("nan")), ("inf", FAIL, lambda v, r: float("inf")),
                    ("text", FAIL, lambda v, r: "abc"), ("list", FAIL, lambda v, r: [v])])]))
    add(Case("AdaptiveResult.confidence_interval", "irt",
             lambda kw: pub(AT)(_bank(), target_se=0.5).run(X()[0].astype(int)).confidence_interval(**kw),
             lambda: dict(confidence_level=0.9), [A("confidence_level", FRACTION)]))
    add(Case("AdaptiveResult.to_frame", "irt",
             lambda kw: pub(AT)(_bank(), target_se=0.5).run(X()[0].astype(int)).to_frame(**kw),
             lambda: dict(confidence_level=0.9), [A("confidence_level", FRACTION)]))
    TB = "effstats.irt.TinyBenchmarks"
    add(Case("TinyBenchmarks.fit", "irt",
             est_fit(TB,
                     ("n_items", "selection", "estimator", "n_dims",
                      "gp_lambda", "ability", "n_init", "n_jobs", "validation", "validation_items", "random_state"),
                                                 then="predict",
                                                 then_kw={"target_outputs": X()[:3]}),
             lambda: dict(source_outputs=X(), n_items=6, selection="random", estimator="p-irt", n_dims=1, n_init=1,
                          n_jobs=1, validation="selected", validation_items=100,
                          random_state=0), [
        A("source_outputs", BINARY), A("n_items", INT), A("selection", OPTION), A("estimator", OPTION),
        A("n_dims", INT, skip=("huge",)),
        A("gp_lambda", FRACTION, skip=("zero", "one")), A("ability", OPTION), A("n_init", INT, skip=("huge",)),
        A("n_jobs", INT, expect={"huge": MAY}), A("validation", OPTION),
        A("validation_items", INT, expect={"huge": MAY}),
        A("random_state", RNG)]))
    add(Case("TinyBenchmarks.predict", "irt",
             lambda kw: fitted_once(TB, None, n_items=6, selection="random", estimator="p-irt", n_dims=1, n_init=1,
                                    random_state=0).predict(**kw),
             lambda: dict(target_outputs=X()[:3]), [A("target_outputs", BN, expect={"half": MAY})]))

    # ---------------------------------------------------------------- reliability
    RL = "effstats.reliability."
    Sdf = lambda: pd.DataFrame(S(), index=[f"m{i}" for i in range(8)], columns=[f"S{j}" for j in range(6)])
    DATA = REAL + [("one-model", FAIL, lambda v, r: np.asarray(v)[:1]),
                   ("all-nan-row", FAIL, lambda v, r: np.where(np.arange(8)[:, None] == 0, np.nan, v))]
    DATA = [d for d in DATA if d[0] != "nan"]  # NaN marks 'not evaluated' in reliability tables
    for f in ("mean_win_rate", "mean_score"):  # leading axes are resamples: (8, 6, 1) is valid
        add(Case(f, "reliability", fn(RL + f), lambda: dict(scores=S()),
                 [A("scores", DATA, expect={"ndim+": MAY, "one-model": MAY})]))
    add(Case("mean_win_rate(frame)", "reliability", fn(RL + "mean_win_rate"), lambda: dict(scores=Sdf(), ties="strict"),
             [
        A("scores", [f for f in FRAME if f[0] != "dup-columns"]), A("ties", OPTION)]))
    add(Case("mean_of_means", "reliability", fn(RL + "mean_of_means"),
             lambda: dict(scores=S(), groups=np.array([0, 0, 1, 1, 2, 2])), [
        A("scores", DATA, expect={"one-model": MAY}),
        A("groups",
          [("short", FAIL, lambda v, r: v[:-1]), ("none", FAIL, lambda v, r: None), ("2-D", FAIL, lambda v, r: v[None]),
                                        ("nan", FAIL, lambda v, r: np.where(np.arange(6) == 0, np.nan, v))])]))
    add(Case("kendall_tau", "reliability", fn(RL + "kendall_tau"),
             lambda: dict(reference=np.arange(8.0), resampled=np.arange(16.0).reshape(2, 8) % 8), [
        # NaN is documented input here (a model without a score drops its pairs); the values are checked against
        # scipy.stats.kendalltau on the complete pairs in
        # test_reliability.py::test_kendall_matches_scipy_with_ties_and_nan
        A("reference", REAL + SHORT0, expect={"nan": MAY}),
        A("resampled", REAL + [("short-cols", FAIL, lambda v, r: np.asarray(v)[..., :-1])], expect={"nan": MAY})]))
    add(Case("dior", "reliability", fn(RL + "dior"),
             lambda: dict(data=S(), decision="scenarios", objective="kendall", n_boot=20, confidence_level=0.9,
                          rng=0), [
        A("data", DATA), A("decision", OPTION), A("objective", OPTION), A("score", OPTION),
        A("n_boot", INT, skip=("huge",)), A("confidence_level", FRACTION),
        A("ties", OPTION), A("rng", RNG)]))
    add(Case("dior(examples)", "reliability", fn(RL + "dior"),
             lambda: dict(data=EX_RM(), decision="examples", size=4, n_boot=20, n_top=2, rng=0), [
        A("size", INT), A("n_top", INT)]))
    add(Case("DIoRResult.confidence_interval", "reliability",
             lambda kw: pub(RL + "dior")(S(), n_boot=20, rng=0).confidence_interval(**kw), lambda: dict(), [
        A("confidence_level", FRACTION)]))
    add(Case("efficiency_curve", "reliability", fn(RL + "efficiency_curve"),
             lambda: dict(data=EX_RM(), decision="examples", sizes=[2, 4], n_boot=10, rng=0), [
        A("data", DATA), A("sizes", _sizes(8)), A("decision", OPTION)]))
    add(Case("rank_switch_curve", "reliability", fn(RL + "rank_switch_curve"),
             lambda: dict(data=EX_RM(), sizes=[2, 4], cluster_sizes=(2, 3), n_boot=10, rng=0), [
        A("sizes", _sizes(8)), A("cluster_sizes", _sizes(6)), A("n_top", INT), A("n_boot", INT, skip=("huge",))]))
    add(Case("prompt_strategies", "reliability", fn(RL + "prompt_strategies"),
             lambda: dict(data=EX_RM(), n_examples=[2, 3], n_boot=10, rng=0), [
        A("data", [("array", FAIL, lambda v, r: v.values), ("text", FAIL, lambda v, r: "abc")]),
        A("n_examples", _sizes(8)), A("example", COLUMN),
        A("prompt", COLUMN), A("n_boot", INT, skip=("huge",))]))
    add(Case("rank_resolution", "reliability", fn(RL + "rank_resolution"),
             lambda: dict(data=EX_RM(), sizes=[2, 4], n_boot=10, rng=0), [
        A("sizes", _sizes(8)), A("quantile", FRACTION, skip=("none",)), A("n_boot", INT, skip=("huge",))]))
    add(Case("rank_trajectories", "reliability", fn(RL + "rank_trajectories"),
             lambda: dict(data=EX_RM(), sizes=[2, 4], n_boot=10, confidence_level=0.9, rng=0), [
        A("sizes", _sizes(8)), A("confidence_level", FRACTION), A("n_boot", INT, skip=("huge",))]))
    add(Case("subscenario_correlations", "reliability", fn(RL + "subscenario_correlations"), lambda: dict(data=EX_RM()),
             [
        A("data", [("array", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)])]))
    add(Case("counterexample_weaker_model", "reliability", fn(RL + "counterexample_weaker_model"),
             lambda: dict(n_weaker=2), [A("n_weaker", INT, skip=("huge",))]))
    add(Case("counterexample_partial_reporting", "reliability", fn(RL + "counterexample_partial_reporting"),
             lambda: dict(n_models=11), [A("n_models", INT, skip=("huge",))]))
    add(Case("clone_flips", "reliability", fn(RL + "clone_flips"), lambda: dict(data=Sdf(), top_k=3, n_clones=1), [
        A("data", [f for f in FRAME if f[0] not in ("dup-columns",)]), A("top_k", INT),
        A("n_clones", INT, skip=("huge",)), A("eps", POSITIVE)]))
    add(Case("removal_flips", "reliability", fn(RL + "removal_flips"), lambda: dict(data=Sdf(), top_k=2), [
        A("data", [f for f in FRAME if f[0] not in ("dup-columns",)]), A("top_k", INT)]))
    add(Case("flash_helm", "reliability", fn(RL + "flash_helm"),
             lambda: dict(data=EX_RM(), new_models=[0, 3], sizes=(2, 4, None), n_boot=10, rng=0), [
        A("new_models", _positions(6)), A("sizes", _sizes(8)[:-2] + [("text", FAIL, lambda v, r: "abc")]),
        A("tiers",
          [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: [("a", "b")]),
           ("start-2", FAIL, lambda v, r: [(2, 1)]),
                    ("negative", FAIL, lambda v, r: [(1, -1)])]),
        A("rule", OPTION), A("quantile", FRACTION, skip=("none",)), A("n_boot", INT, skip=("huge",)),
        A("resolution",
          [("text", FAIL, lambda v, r: "abc"), ("nan", FAIL, lambda v, r: {2: np.nan, 4: 1.0}),
           ("negative", FAIL, lambda v, r: {2: -1.0, 4: 1.0}),
                         ("empty", FAIL, lambda v, r: {})])]))
    add(Case("Benchmark.from_data", "reliability", fn(RL + "Benchmark.from_data"),
             lambda: dict(data=S(), groups=np.array([0, 0, 1, 1, 2, 2])), [
        A("data", DATA), A("groups", [("short", FAIL, lambda v, r: v[:-1]), ("2-D", FAIL, lambda v, r: v[None]),
                                      ("nan", FAIL, lambda v, r: np.where(np.arange(6) == 0, np.nan, v))])]))

    # ---------------------------------------------------------------- cli
    add(Case("cli.read_scores", "cli", fn("effstats.cli.read_scores"), lambda: dict(path=_wide_csv()), [
        A("path", files(".csv", ("missing", "directory", "empty", "garbage", "text")) + TABLE_FILES, "SCORES", "data",
          "df", "--by",
          # --duplicates last (the default) reads repeated rows, with a warning
          expect={"dup-models": MAY, "long-dup": MAY})]))
    add(Case("cli.read_scores(higher_is_better)", "cli", fn("effstats.cli.read_scores"),
             lambda: dict(path=_wide_csv(), higher_is_better=[]), [
        A("higher_is_better", [("unknown", FAIL, lambda v, r: ["no such column"]), ("int", FAIL, lambda v, r: 3),
                               ("int-list", FAIL, lambda v, r: [3]), ("dict", FAIL, lambda v, r: {"a": 1})],
          "--higher-is-better")]))
    add(Case("cli.audit", "cli", fn("effstats.reliability.audit"),
             lambda: dict(data=Sdf(), out=_tmpdir(), n_boot=20, target=0.95, seed=0, progress=False), [
        A("data", [f for f in FRAME if f[0] not in ("dup-columns",)], "SCORES"),
        A("n_boot", INT, "--n-boot", skip=("huge",)), A("target", FRACTION, "--target"),
        A("seed", RNG, "--seed"),
        A("out", [("file", FAIL, lambda v, r: __file__), ("int", FAIL, lambda v, r: 3)])]))

    def main_call(kw: dict) -> Any:
        import contextlib
        import io

        argv = ["audit", kw["scores"], "--out", kw["out"], "--n-boot", str(kw["n_boot"]), "--no-progress"]
        if "by" in kw:
            argv += ["--by", str(kw["by"])]
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                code = pub("effstats.cli.main")(argv)
        except SystemExit as exc:
            code = exc.code
        if code not in (0, None):
            raise ValueError(err.getvalue() or f"exit code {code}")
        return code

    add(Case("cli.main audit", "cli", main_call, lambda: dict(scores=_wide_csv(), out=_tmpdir(), n_boot=20), [
        A("scores", files(".csv", ("missing", "directory", "empty", "garbage", "text")) + TABLE_FILES, "SCORES", "data",
          "df", "--by",
          expect={"dup-models": MAY, "long-dup": MAY}),
        A("n_boot",
          [("zero", FAIL, lambda v, r: 0), ("negative", FAIL, lambda v, r: -3), ("text", FAIL, lambda v, r: "abc"),
           ("float", FAIL, lambda v, r: 2.5)],
          "n-boot", "n_boot"),
        A("out", [("file", FAIL, lambda v, r: __file__)], "OUT", "--out")]))

    # ---------------------------------------------------------------- sequential
    SQ = "effstats.sequential."
    add(Case("design", "sequential", fn(SQ + "design"),
             lambda: dict(k=3, alpha=0.05, beta=0.1, sided=2, spending="ld_pocock", backend="native"), [
        A("k", INT, skip=("huge",)), A("alpha", FRACTION), A("beta", FRACTION),
        A("sided", OPTION + [("three", FAIL, lambda v, r: 3)]),
        A("spending", OPTION), A("backend", OPTION)]))
    add(Case("design(timing)", "sequential", fn(SQ + "design"), lambda: dict(k=3, timing=[0.3, 0.6, 1.0]), [
        A("timing",
          REAL + [("decreasing", FAIL, lambda v, r: [0.6, 0.3, 1.0]), ("above-1", FAIL, lambda v, r: [0.5, 1.2, 1.5]),
                            ("zero", FAIL, lambda v, r: [0.0, 0.5, 1.0]), ("short", MAY, lambda v, r: [0.5, 1.0])],
                            skip=("none",))]))
    add(Case("design(information)", "sequential", fn(SQ + "design"),
             lambda: dict(information=[100.0, 200.0, 300.0], max_information=300.0), [
        A("information",
          REAL + [("decreasing", FAIL, lambda v, r: [200.0, 100.0, 300.0]),
                  ("negative", FAIL, lambda v, r: [-1.0, 2.0, 3.0])], skip=("none",)),
        A("max_information", POSITIVE)]))
    add(Case("GroupSequentialDesign.recompute", "sequential", lambda kw: pub(SQ + "design")(k=3).recompute(**kw),
             lambda: dict(information=[100.0, 250.0], max_information=300.0), [
        A("information",
          REAL + [("decreasing", FAIL, lambda v, r: [250.0, 100.0]), ("negative", FAIL, lambda v, r: [-1.0, 2.0])],
          skip=("none",)),
        A("max_information", POSITIVE)]))
    add(Case("GroupSequentialDesign.crossing_probability", "sequential",
             lambda kw: pub(SQ + "design")(k=3).crossing_probability(**kw),
             lambda: dict(theta=[0.0, 1.0]), [A("theta", REAL, skip=("ndim-", "none"))]))
    add(Case("get_spending", "sequential", fn(SQ + "get_spending"), lambda: dict(spending="hsd", param=-2.0),
             [A("spending", OPTION), A("param", FINITE, skip=("none",))]))
    for f, p in [("ld_obrien_fleming", "rho"), ("hwang_shih_decani", "gamma"), ("kim_demets_power", "rho"),
                 ("wang_tsiatis", "delta")]:
        add(Case(f, "sequential", lambda kw, f=f: pub(SQ + "design")(k=3, spending=pub(SQ + f)(**kw)),
                 (lambda p: lambda: {p: 1.0 if p != "delta" else 0.25})(p),
                 [A(p,
                    FINITE + ([("zero", FAIL, lambda v, r: 0.0), ("negative", FAIL, lambda v, r: -1.0)]
                              if p == "rho" else []),
                    skip=("none",))]))
    SE = SQ + "SequentialEvaluator"
    ab = lambda: dict(scores_a=(np.arange(400) % 3 == 0).astype(float),
                      scores_b=(np.arange(400) % 4 == 0).astype(float))

    def ev_fit(kw: dict) -> Any:
        init = {k: kw.pop(k) for k in ("rules", "alpha", "spending", "initial", "batch", "max_n", "stratified", "null",
                                       "rng") if k in kw}
        init.setdefault("rules", [pub(SQ + "Efficacy")()])
        return pub(SE)(**init).fit(**kw)

    add(Case("SequentialEvaluator.fit", "sequential", ev_fit, lambda: dict(ab(), initial=100, batch=100, rng=0), [
        A("scores_a", REAL + SHORT0 + [("above-1", MAY, lambda v, r: v + 1.0)], skip=("none",)),
        A("scores_b", REAL + SHORT0, skip=("none",)),
        A("groups",
          [("short", FAIL, lambda v, r: np.zeros(399, int)),
           ("nan", FAIL, lambda v, r: np.where(np.arange(400) == 0, np.nan, 0.0)),
                     ("2-D", FAIL, lambda v, r: np.zeros((2, 200)))]),
        A("alpha", FRACTION), A("initial", INT, expect={"huge": MAY}), A("batch", INT, expect={"huge": MAY}),
        A("max_n", INT, expect={"huge": MAY}, skip=("none",)), A("stratified", FLAG),
        A("null", FINITE, skip=("none",)), A("spending", OPTION), A("rng", RNG),
        A("rules",
          [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: "abc"), ("bad-item", FAIL, lambda v, r: [3]),
           ("none", FAIL, lambda v, r: None)])]))
    add(Case("SequentialEvaluator.simulate", "sequential",
             lambda kw: pub(SE)([pub(SQ + "Efficacy")()], rng=0).simulate(**kw),
             lambda: dict(ab(), n_runs=5, rng=0),
             [A("n_runs", INT, skip=("huge",)), A("scores_a", REAL + SHORT0, skip=("none",)), A("rng", RNG)]))
    add(Case("SequentialEvaluator.start", "sequential", lambda kw: pub(SE)([pub(SQ + "Efficacy")()]).start(**kw),
             lambda: dict(max_n=400, n_groups=1), [
        A("max_n", INT, skip=("huge",)), A("n_groups", INT, skip=("huge",))]))
    add(Case("SequentialEvaluator.update", "sequential",
             lambda kw: pub(SE)([pub(SQ + "Efficacy")()], initial=50, batch=50).start(400).update(**kw),
             lambda: dict(scores_a=ab()["scores_a"][:100], scores_b=ab()["scores_b"][:100]), [
        A("scores_a", REAL + SHORT0, skip=("none",)), A("scores_b", REAL + SHORT0, skip=("none",)),
        A("groups",
          [("short", FAIL, lambda v, r: np.zeros(99, int)), ("out-of-range", FAIL, lambda v, r: np.full(100, 7))])]))
    for rule, p, bad in [("Efficacy", "alternative", OPTION), ("Equivalence", "margin", POSITIVE),
                         ("Precision", "half_width", POSITIVE),
                         ("Threshold", "tau", FINITE), ("Threshold", "direction", OPTION),
                         ("Futility", "threshold", FRACTION),
                         ("BetaSpendingFutility", "effect", POSITIVE), ("BetaSpendingFutility", "beta", FRACTION),
                         ("DiminishingReturns", "epsilon", POSITIVE)]:
        add(Case(f"{rule}({p})", "sequential",
                 (lambda rule: lambda kw: pub(SE)([pub(SQ + rule)(**kw)], initial=100, batch=100,
                                                  rng=0).fit(**ab()))(rule),
                 (lambda p, rule: lambda: {**({"effect": 0.02} if rule == "Futility" else {}),
                                           p: {"alternative": "two-sided", "direction": "both", "tau": 0.3,
                                               "threshold": 0.1, "beta": 0.1}.get(p, 0.02)})(p, rule),
                 [A(p, bad)]))
    add(Case("sequential.stratified_mean", "sequential", fn(SQ + "stratified_mean"),
             lambda: dict(scores=np.arange(40) % 3 / 2.0, groups=np.arange(40) % 4), [
        A("scores", REAL + SHORT0),
        A("groups",
          [("short", FAIL, lambda v, r: v[:-1]), ("2-D", FAIL, lambda v, r: v[None]),
           ("nan", FAIL, lambda v, r: np.where(np.arange(40) == 0, np.nan, v))])]))
    add(Case("rank_models", "sequential", fn(SQ + "rank_models"),
             lambda: dict(scores=pub(RMP)((np.arange(3 * 300).reshape(3, 300) * np.array([[1], [3], [7]]) % 5
                                           < np.array([[1], [2], [3]])).astype(float)),
                                                                              correction="holm", alpha=0.05, rng=0,
                                                                              initial=100, batch=100), [
        A("scores", REAL, skip=("ndim-",)), A("correction", OPTION), A("alpha", FRACTION),
        A("model_ids",
          [("duplicate", FAIL, lambda v, r: ["a", "a", "b"]), ("short", FAIL, lambda v, r: ["a", "b"]),
           ("text", FAIL, lambda v, r: "abc")]),
        A("rules", [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: "abc")])]))
    add(Case("sequential_pvalue", "sequential", fn(SQ + "sequential_pvalue"),
             lambda: dict(z=2.5, look=2, n=[100.0, 200.0, 300.0], max_n=300.0), [
        A("z", FINITE), A("look", INT + [("beyond", FAIL, lambda v, r: 4)], skip=("huge",)),
        A("n", REAL + [("decreasing", FAIL, lambda v, r: [200.0, 100.0, 300.0])], skip=("none",)), A("max_n", POSITIVE),
        A("alpha", FRACTION), A("spending", OPTION)]))
    C.extend(_more_cases())
    C.extend(_alignment_cases())
    C.extend(_frame_cases())
    C.extend(_last_cases())
    C.extend(_distributed_cases())
    C.extend(_binary_required_cases())
    C.extend(_workflow_cases())
    # Estimators read NaN and missing masks as cells not evaluated: a clear error or a result that warns
    missing_labels = ("nan", "missing-rm", "missing-cells", "missing-cells-matrix")
    for case in C:
        if case.module in ("sortsearch", "disco", "irt"):
            for arg in case.args:
                if arg.name in ("responses", "source_outputs", "target_outputs", "outputs", "evaluate_fn"):
                    for lab in missing_labels:
                        arg.expect.setdefault(lab, MISSING)
    return C


def _binary_required_cases() -> list[Case]:
    """Methods that need complete 0/1 correctness, given a ResponseMatrix of scores or with missing cells."""
    C: list[Case] = []
    ok_missing = {"IRT2PL.fit"}  # IRT fits the observed cells only
    for name, mod, path, init in [("SortSearch.fit", "sortsearch", "effstats.sortsearch.SortSearch", {}),
                                  ("CopyNearestExpand.fit", "sortsearch", "effstats.sortsearch.CopyNearestExpand", {}),
                                  ("HybridSearch.fit", "sortsearch", "effstats.sortsearch.HybridSearch",
                                   dict(budget=6, neighbors=(1,), weights=(0.0,), cv=2)),
                                  ("SortSearchDirect.fit", "disco", "effstats.disco.SortSearchDirect", dict(n_items=5)),
                                  ("IRT2PL.fit", "irt", "effstats.irt.IRT2PL", dict(method="jml", max_iter=20)),
                                  ("TinyBenchmarks.fit", "irt", "effstats.irt.TinyBenchmarks",
                                   dict(n_items=6, selection="random", estimator="p-irt", n_dims=1, n_init=1))]:
        first = ("responses" if "Search" in name and "Direct" not in name or "IRT2PL" in name or "CopyNearest" in name
                 else "source_outputs")
        C.append(Case(f"{name}(ResponseMatrix)", mod,
                      (lambda path, init, first: lambda kw: pub(path)(**init).fit(kw[first]))(path, init, first),
                      (lambda first: lambda: {first: X()})(first),
                      [A(first, NEEDS_BINARY, expect={"missing-cells-matrix": MAY} if name in ok_missing else {})]))
    for f in ("e_rand", "cohen_kappa", "decompose_errors"):
        kw0 = {"order": np.arange(NI)} if f == "decompose_errors" else {}
        C.append(Case(f"{f}(ResponseMatrix)", "metrics",
                      (lambda f, kw0: lambda kw: pub("effstats.metrics." + f)(**kw, **kw0))(f, kw0),
                      lambda: dict(a=np.roll(X()[:4], 1, axis=1), y=X()[:4]), [A("y", NEEDS_BINARY)]))
    return C


def _distributed_cases() -> list[Case]:
    """effstats.distributed without a cluster (client=None runs the same tasks locally)."""
    DS, SQ = "effstats.distributed.", "effstats.sequential."
    C: list[Case] = []
    add = C.append

    def saved() -> str:
        return pub(DS + "save_packed")(pub("effstats.bitpack.PackedBinaryMatrix").from_dense(X()),
                                       _tmpdir() + "/cache.zarr", rows_per_chunk=5)

    add(Case("distributed.save_packed", "distributed", fn(DS + "save_packed"),
             lambda: dict(matrix=pub("effstats.bitpack.PackedBinaryMatrix").from_dense(X()), path=_tmpdir() + "/c.zarr",
                          rows_per_chunk=5), [
        A("matrix",
          [("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None),
           ("twos", FAIL, lambda v, r: np.where(X(), 2, 0)),
                     ("nan", FAIL, lambda v, r: np.where(X(), np.nan, 0.0))]),
        A("rows_per_chunk", INT, expect={"huge": MAY}), A("overwrite", FLAG),
        A("path", [("int", FAIL, lambda v, r: 3), ("existing", FAIL, lambda v, r: __file__)])]))
    for f in ("open_packed", "packed_item_sums"):
        add(Case(f"distributed.{f}", "distributed",
                 (lambda f: lambda kw: (lambda out: out.compute() if hasattr(out, "compute") else out)(
                     pub(DS + f)(**kw)))(f),
                 lambda: dict(path=saved()),
                 [A("path",
                    files(".zarr", ("missing", "empty", "garbage", "text")) + [("int", FAIL, lambda v, r: 3)])]))
    add(Case("distributed.map_tasks", "distributed", fn(DS + "map_tasks"),
             lambda: dict(func=_add, args=[(1, 2), (3, 4)], shared=10), [
        A("func", [("not-callable", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)]),
        A("args",
          [("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None), ("int", FAIL, lambda v, r: 3),
           ("empty", MAY, lambda v, r: [])])]))
    add(Case("distributed.task_seeds", "distributed", fn(DS + "task_seeds"), lambda: dict(rng=0, n_tasks=4),
             [A("rng", RNG), A("n_tasks", INT, skip=("huge",))]))
    add(Case("distributed.dior", "distributed", fn(DS + "dior"), lambda: dict(data=S(), n_boot=20, rng=0, n_tasks=2), [
        A("data", [d for d in REAL if d[0] != "nan"]), A("n_boot", INT, skip=("huge",)),
        A("n_tasks", INT, skip=("huge",)), A("rng", RNG),
        A("decision", OPTION), A("objective", OPTION)]))
    add(Case("distributed.simulate", "distributed", fn(DS + "simulate"),
             lambda: dict(evaluator=pub(SQ + "SequentialEvaluator")([pub(SQ + "Efficacy")()]),
                          scores_a=(np.arange(400) % 3 == 0) * 1.0,
                          scores_b=(np.arange(400) % 4 == 0) * 1.0, n_runs=6, rng=0, n_tasks=2), [
        A("evaluator", [("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)]),
        A("scores_a", REAL + SHORT0, skip=("none",)),
        A("n_runs", INT, skip=("huge",)), A("n_tasks", INT, skip=("huge",)), A("rng", RNG)]))
    return C


def _FALLBACK_PAIR():
    """A chosen estimator's prediction flagging its second target out of range, and a design-based one's."""
    sp = pub("effstats.disco.SubsetPrediction")
    chosen = sp(np.array([0.4, 0.9]), np.array([0.05, 0.05]), "conformal", residuals=np.array([0.02, 0.05, 0.03]),
                out_of_range=np.array([False, True]))
    return chosen, sp(np.array([0.45, 0.85]), np.array([0.1, 0.1]), "design")


def _FALLBACK_RESULT():
    import warnings

    chosen, fallback = _FALLBACK_PAIR()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pub("effstats.disco.with_fallback")(lambda: chosen, lambda: ("random", fallback), "ridge")


def _last_cases() -> list[Case]:
    C: list[Case] = []
    add = C.append
    SS, DC, RL, SQ = "effstats.sortsearch.", "effstats.disco.", "effstats.reliability.", "effstats.sequential."
    HS = dict(budget=6, neighbors=(1, 3), weights=(0.0, 1.0), cv=2)
    add(Case("HybridSearch.select", "sortsearch", lambda kw: fitted(SS + "HybridSearch", **HS).select(**kw),
             lambda: dict(budget=6), [A("budget", INT)]))
    add(Case("HybridSearch.cv_setting", "sortsearch", lambda kw: fitted(SS + "HybridSearch", **HS).cv_setting(**kw),
             lambda: dict(budget=8),
             [A("budget", INT)]))
    add(Case("HybridSearch.predict", "sortsearch",
             lambda kw: (lambda e: (e.select(6), e.predict(**kw))[1])(fitted(SS + "HybridSearch", **HS)),
             lambda: dict(responses=X()[:3, :6]),
             [A("responses", BINARY + SHORT1), A("items", _positions(NI), skip=("empty",))]))
    add(Case("MethodChooser.predict", "disco",
             lambda kw: fitted_once(DC + "MethodChooser", None,
                                    candidates={"random + direct": pub(DC + "RandomDirect")(5)}, n_items=5,
                                    n_splits=2).predict(**kw),
             lambda: dict(target_outputs=X()[:3]), [A("target_outputs", BINARY + SHORT1, expect={"half": MAY})]))
    add(Case("summarize_comparison", "disco", fn(DC + "summarize_comparison"),
             lambda: dict(table=pub(DC + "compare_methods")(RM(), SPLIT(),
                                                            {"random + direct": pub(DC + "RandomDirect")(5),
                                                             "anchor": pub(DC + "AnchorCorr")(5)},
                                                             n_items=5, n_splits=2), reference="random + direct"), [
        A("table",
          [("empty", FAIL, lambda v, r: v.iloc[:0]), ("text", FAIL, lambda v, r: "abc"),
           ("no-columns", FAIL, lambda v, r: v[[]])]),
        A("reference", [("unknown", FAIL, lambda v, r: "no-such-method"), ("int", FAIL, lambda v, r: 3)])]))
    add(Case("SpendingFunction", "sequential",
             lambda kw: pub(SQ + "design")(k=3, spending=pub(SQ + "SpendingFunction")(**kw)),
             lambda: dict(family="hsd", param=-2.0), [
        A("family", OPTION), A("param", FINITE, skip=("none",))]))
    add(Case("SequentialPlan.conditional_power", "sequential",
             lambda kw: pub(SQ + "plan")(effect=0.05, sd=0.5, looks=3).conditional_power(**kw),
             lambda: dict(look=1, estimate=0.02), [
        A("look", INT + [("beyond", FAIL, lambda v, r: 4)], skip=("huge",)), A("estimate", FINITE),
        A("effect", FINITE, skip=("none",))]))
    add(Case("Benchmark.sub_sums", "reliability", lambda kw: pub(RL + "Benchmark").from_data(S()).sub_sums(**kw),
             lambda: dict(counts=np.ones((2, 6))), [
        A("counts", REAL + [("negative", FAIL, lambda v, r: -v)], skip=("none",), expect={"ndim-": MAY})]))
    add(Case("DIoRPlan.statistic", "reliability", lambda kw: (lambda p: p.statistic(**kw))(pub(RL + "dior_plan")(S())),
             lambda: dict(indices=pub(RL + "dior_plan")(S()).draw(4, rng=0)), [
        A("indices",
          [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: "abc"),
           ("out-of-range", FAIL, lambda v, r: [np.full_like(a, 99) for a in v]),
                      ("float", FAIL, lambda v, r: [a + 0.5 for a in v])])]))
    add(Case("Benchmark.check_connected", "reliability",
             lambda kw: pub(RL + "Benchmark").from_data(S()).check_connected(**kw), lambda: dict(name="data"), [
        A("name", [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None)],
          expect={"int": MAY, "none": MAY})]))
    # results: confidence_interval(confidence_level) / to_frame(confidence_level) / predictions(rows)
    CL = [A("confidence_level", FRACTION)]
    SSE, CNE = SS + "SortSearch", SS + "CopyNearestExpand"
    sim = lambda: fitted_once(SSE).simulate(X()[:4], 6)
    exp = lambda: fitted(CNE).simulate(X()[:4], 6)  # fresh: simulate draws from the estimator's generator
    hyb = lambda: fitted_once(SS + "HybridSearch", None, **HS).simulate(X()[:4])
    for nm, res in [("SearchResult", sim), ("ExpandResult", exp), ("HybridResult", hyb)]:
        add(Case(f"{nm}.to_frame", "sortsearch", (lambda res: lambda kw: res().to_frame(**kw))(res),
                 lambda: dict(confidence_level=0.9), CL))
        add(Case(f"{nm}.predictions", "sortsearch", (lambda res: lambda kw: res().predictions(**kw))(res),
                 lambda: dict(rows=[0, 1]), [
            A("rows", _positions(4), expect={"duplicate": MAY, "empty": MAY}, skip=("strings",))]))
        if nm != "SearchResult":
            add(Case(f"{nm}.confidence_interval", "sortsearch",
                     (lambda res: lambda kw: res().confidence_interval(**kw))(res), lambda: dict(confidence_level=0.9),
                     CL))
            add(Case(f"{nm}.evaluate", "sortsearch", (lambda res: lambda kw: res().evaluate(**kw))(res),
                     lambda: dict(true_responses=X()[:4]), [
                A("true_responses", BINARY + SHORT0 + SHORT1)]))
            add(Case(f"{nm}.correctness", "sortsearch", (lambda res: lambda kw: res().correctness(**kw))(res),
                     lambda: dict(rows=[0, 1]), [
                A("rows", _positions(4), expect={"duplicate": MAY, "empty": MAY}, skip=("strings",))]))
    for nm, est, kw0 in [("CopyNearestExpand", CNE, dict(budget=6)), ("HybridSearch", SS + "HybridSearch", {})]:
        add(Case(f"{nm}.score", "sortsearch",
                 (lambda est, kw0: lambda kw: fitted(est, None, **(HS if "Hybrid" in est else {})).score(**kw,
                                                                                                         **kw0))(est,
                                                                                                                 kw0),
                 lambda: dict(responses=X()[:4]), [A("responses", BINARY + SHORT1)]))
    add(Case("estimate_accuracy", "sortsearch", fn(SS + "estimate_accuracy"),
             lambda: dict(y=X()[:3][:, [0, 5, 10, 15, 20]], positions=np.array([0, 5, 10, 15, 20]), n=NI,
                          design="systematic"), [
        A("y", BINARY + SHORT1),
        A("positions", _positions(NI) + [("unsorted", MAY, lambda v, r: v[::-1])], expect={"duplicate": FAIL}),
        A("n", INT),
        A("design", OPTION)]))
    MT = "effstats.metrics."
    add(Case("CorrelationResult.confidence_interval", "metrics",
             lambda kw: pub(MT + "accuracy_correlation")(
                 np.linspace(0, 1, 8), np.linspace(0, 1, 8) ** 2 + np.sin(np.arange(8)) / 10).confidence_interval(**kw),
             lambda: dict(confidence_level=0.9, method="pearson"),
             [A("confidence_level", FRACTION), A("method", OPTION)]))
    add(Case("CorrelationResult.to_frame", "metrics",
             lambda kw: pub(MT + "accuracy_correlation")(
                 np.linspace(0, 1, 8), np.linspace(0, 1, 8) ** 2 + np.sin(np.arange(8)) / 10).to_frame(**kw),
             lambda: dict(confidence_level=0.9), [A("confidence_level", FRACTION)]))
    add(Case("CurveFit.to_frame", "metrics",
             lambda kw: pub(MT + "fit_power_law")(np.array([10.0, 20, 40, 80, 160, 320]),
                                                  np.array([0.30, 0.22, 0.15, 0.11, 0.08, 0.06])).to_frame(**kw),
             lambda: dict(confidence_level=0.9), CL))
    add(Case("DISCO.signatures", "disco",
             lambda kw: fitted_once(DC + "DISCO", PRM(), n_items=5, predictor="knn", pca=None).signatures(**kw),
             lambda: dict(outputs=P()[:3]), [A("outputs", PROBA + [("selected-only", MAY, lambda v, r: v[:, :5])])]))
    add(Case("MethodChooser.predict_interval", "disco",
             lambda kw: fitted_once(DC + "MethodChooser", None,
                                    candidates={"random + direct": pub(DC + "RandomDirect")(5)}, n_items=5,
                                    n_splits=2).predict_interval(**kw),
             lambda: dict(target_outputs=X()[:3], n_splits=2),
             [A("target_outputs", BINARY + SHORT1, expect={"half": MAY}),
              A("n_splits", INT + [("one", FAIL, lambda v, r: 1)], expect={"huge": MAY})]))
    add(Case("SubsetPrediction.to_frame", "disco",
             lambda kw: fitted_once(DC + "RandomDirect", None, n_items=5).predict_interval(X()[:3]).to_frame(**kw),
             lambda: dict(confidence_level=0.9), CL))
    add(Case("SimulationResult.confidence_interval", "sequential",
             lambda kw: pub(SQ + "SequentialEvaluator")([pub(SQ + "Efficacy")()], rng=0).simulate(
                 (np.arange(400) % 3 == 0) * 1.0, (np.arange(400) % 4 == 0) * 1.0, n_runs=5,
                 rng=0).confidence_interval(**kw),
             lambda: dict(), CL))
    add(Case("StagewiseInference.to_frame", "sequential",
             lambda kw: pub(SQ + "stagewise_inference")(pub(SQ + "design")(k=3), z=2.5, look=2).to_frame(**kw),
             lambda: dict(confidence_level=0.9), CL))
    add(Case("GroupSequentialDesign.to_frame", "sequential", lambda kw: pub(SQ + "design")(k=3).to_frame(**kw),
             lambda: dict(sizes=True), [A("sizes", FLAG)]))
    add(Case("detectable_effect", "sequential", fn(SQ + "detectable_effect"),
             lambda: dict(items_available=2000, sd=0.5, power=0.9, alpha=0.05, looks=3), [
        A("items_available", INT, skip=("huge",), expect={"float": MAY, "list": MAY}), A("sd", POSITIVE),
        A("power", FRACTION), A("alpha", FRACTION), A("looks", INT, skip=("huge",))]))
    return C


def _frame_cases() -> list[Case]:
    """Leaderboard tables as DataFrames: repeated model rows or scenario columns, text, inf, complex cells."""
    RL = "effstats.reliability."
    Sdf = lambda: pd.DataFrame(S(), index=[f"m{i}" for i in range(8)], columns=[f"S{j}" for j in range(6)])
    return [Case(f"{f}(DataFrame)", "reliability", (lambda f, kw: lambda k: pub(RL + f)(**k, **kw))(f, kw),
                 lambda: dict(data=Sdf()), [A("data", FRAME)])
            for f,
            kw in [("Benchmark.from_data", {}), ("dior", dict(n_boot=10, rng=0)), ("clone_flips", dict(top_k=2)),
                   ("removal_flips", dict(top_k=2))]]


def _alignment_cases() -> list[Case]:
    """Targets given as a ResponseMatrix fitted from a ResponseMatrix: aligned by item id, never by position."""
    C: list[Case] = []
    DC = "effstats.disco."
    tgt = lambda: RM().subset(models=[0, 1, 2])
    for est, kw in [("RandomDirect", dict(n_items=5)), ("AnchorCorr", dict(n_items=5)),
                    ("StratifiedHT", dict(n_items=5, n_strata=2)),
                    ("SortSearchDirect", dict(n_items=5))]:
        exp = {"missing-cells": MISSING} if est == "SortSearchDirect" else {}
        C.append(Case(f"{est}.predict(ResponseMatrix)", "disco",
                      (lambda est, kw: lambda k: _rm_fitted(DC + est, **kw).predict(**k))(est, kw),
                      lambda: dict(target_outputs=tgt()), [A("target_outputs", ALIGN, expect=exp)]))
    C.append(Case("TinyBenchmarks.predict(ResponseMatrix)", "irt",
                  lambda k: _rm_fitted("effstats.irt.TinyBenchmarks", n_items=6, selection="random", estimator="p-irt",
                                       n_dims=1, n_init=1).predict(**k),
                  lambda: dict(target_outputs=tgt()), [A("target_outputs", ALIGN)]))
    C.append(Case("IRT2PL.abilities(ResponseMatrix)", "irt",
                  lambda k: _rm_fitted("effstats.irt.IRT2PL", method="jml", max_iter=20).abilities(**k),
                  lambda: dict(responses=tgt()), [A("responses", ALIGN)]))
    C.append(Case("SortSearch.predict(ResponseMatrix)", "sortsearch",
                  lambda k: _rm_fitted("effstats.sortsearch.SortSearch", select=5).predict(**k),
                  lambda: dict(responses=RM().subset(
                      models=[0, 1, 2], items=_rm_fitted("effstats.sortsearch.SortSearch", select=5).selected_)),
                  [A("responses", ALIGN, expect={"missing-cells": MISSING})]))
    C.append(Case("CopyNearestExpand.predict(ResponseMatrix)", "sortsearch",
                  lambda k: _rm_fitted("effstats.sortsearch.CopyNearestExpand", select=5).predict(**k),
                  lambda: dict(responses=RM().subset(
                      models=[0, 1, 2], items=_rm_fitted("effstats.sortsearch.CopyNearestExpand", select=5).selected_)),
                  [A("responses", ALIGN, expect={"missing-cells": MISSING})]))
    return C


_RM_FITTED: dict = {}


def _rm_fitted(path: str, select: int | None = None, **params: Any):
    key = (path, select, repr(sorted(params.items())))
    if key not in _RM_FITTED:
        est = fitted(path, RM(), **params)
        if select is not None:
            est.select(select)
        _RM_FITTED[key] = est
    return _RM_FITTED[key]


def _more_cases() -> list[Case]:
    """Public names added during the restructuring (result protocol, planning, choosers, readers)."""
    C: list[Case] = []
    add = C.append
    SS, DC, RL, SQ = "effstats.sortsearch.", "effstats.disco.", "effstats.reliability.", "effstats.sequential."
    SSE = SS + "SortSearch"
    CL = [A("confidence_level", FRACTION)]
    # ---- the result protocol: confidence_interval(confidence_level)
    add(Case("SearchResult.confidence_interval", "sortsearch",
             lambda kw: fitted_once(SSE).simulate(X()[:4], 6).confidence_interval(**kw),
             lambda: dict(confidence_level=0.9), CL))
    add(Case("SubsetPrediction.confidence_interval", "disco",
             lambda kw: fitted_once(DC + "RandomDirect", None, n_items=5).predict_interval(X()[:3]).confidence_interval(
                 **kw),
             lambda: dict(confidence_level=0.9), CL))
    add(Case("with_fallback", "disco", fn(DC + "with_fallback"),
             lambda: dict(chosen=lambda: _FALLBACK_PAIR()[0], fallback=lambda: ("random", _FALLBACK_PAIR()[1]),
                          chosen_name="ridge"), [
        A("chosen", [("not-callable", FAIL, lambda v, r: "abc"), ("not-a-prediction", FAIL, lambda v, r: lambda: 3)]),
        A("fallback", [("not-callable", FAIL, lambda v, r: "abc"), ("not-a-pair", FAIL, lambda v, r: lambda: "abc"),
                       ("other-targets", FAIL, lambda v, r: lambda: ("x", _FALLBACK_PAIR()[1].__class__(
                           np.array([0.5]), np.array([0.1]), "design")))]),
        A("chosen_name", [("int", FAIL, lambda v, r: 3)]),
        A("score_range", [("reversed", FAIL, lambda v, r: (0.9, 0.1)), ("one-bound", FAIL, lambda v, r: (0.5,)),
                          ("above-one", FAIL, lambda v, r: (0.2, 1.5)), ("strings", FAIL, lambda v, r: ("a", "b")),
                          ("nan", FAIL, lambda v, r: (np.nan, 0.9))])]))
    add(Case("FallbackPrediction.confidence_interval", "disco",
             lambda kw: _FALLBACK_RESULT().confidence_interval(**kw), lambda: dict(confidence_level=0.9), CL))
    add(Case("FallbackPrediction.to_frame", "disco",
             lambda kw: _FALLBACK_RESULT().to_frame(**kw), lambda: dict(confidence_level=0.9), CL))
    add(Case("fallback_candidate", "disco", fn(DC + "fallback_candidate"),
             lambda: dict(estimators={"ridge": fitted_once(DC + "RandomLearn", None, n_items=5, random_state=1),
                                      "aipw": fitted_once(DC + "AIPW", None, n_items=5, random_state=1)},
                          best="ridge"), [
        A("estimators", [("empty", FAIL, lambda v, r: {}), ("text", FAIL, lambda v, r: "abc"),
                         ("unfitted", FAIL, lambda v, r: {"ridge": pub(DC + "RandomLearn")(5)})]),
        A("best", [("unknown", FAIL, lambda v, r: "no-such-estimator"), ("int", FAIL, lambda v, r: 3)])]))
    add(Case("RandomDirect.predict_interval", "disco",
             lambda kw: fitted_once(DC + "RandomDirect", None, n_items=5).predict_interval(**kw),
             lambda: dict(target_outputs=X()[:3]), [A("target_outputs", BINARY + SHORT1, expect={"half": MAY})]))
    add(Case("StagewiseInference.confidence_interval", "sequential",
             lambda kw: pub(SQ + "stagewise_inference")(pub(SQ + "design")(k=3), z=2.5,
                                                        look=2).confidence_interval(**kw),
             lambda: dict(confidence_level=0.9), CL))
    # ---- sortsearch
    add(Case("stratified_positions", "sortsearch", fn(SS + "stratified_positions"), lambda: dict(n=NI, budget=5, rng=0),
             [
        A("n", INT, skip=("huge",)), A("budget", INT), A("rng", RNG)]))
    add(Case("korn_graubard_interval", "sortsearch", fn(SS + "korn_graubard_interval"),
             lambda: dict(estimate=np.array([0.3, 0.6]), standard_error=np.array([0.05, 0.04]), budget=10, n_items=NI,
                          confidence_level=0.95), [
        A("estimate", REAL + [("above-1", FAIL, lambda v, r: v + 1.0)], skip=("ndim+",), expect={"ndim-": MAY}),
        A("standard_error", REAL + [("negative", FAIL, lambda v, r: -v)], skip=("ndim+",)),
        A("budget", INT), A("n_items", INT, skip=("huge",)), A("confidence_level", FRACTION)]))
    add(Case("SortSearch.score", "sortsearch", lambda kw: fitted_once(SSE).score(**kw),
             lambda: dict(responses=X()[:4], budget=6), [
        A("responses", BINARY + SHORT1), A("budget", INT)]))
    add(Case("SortSearch.insert_models", "sortsearch",
             lambda kw: (lambda e: (e.select(5), e.insert_models(**kw))[1])(fitted(SSE)),
             lambda: dict(responses=X()[:2, :5]), [A("responses", BINARY + SHORT1)]))
    HS = SS + "HybridSearch"
    add(Case("HybridSearch.fit", "sortsearch",
             est_fit(HS, ("budget", "neighbors", "weights", "cv", "sort", "random_state")),
             lambda: dict(responses=X(), budget=6, neighbors=(1, 3), weights=(0.0, 1.0), cv=2, random_state=0), [
        A("responses", BINARY), A("budget", INT), A("cv", INT + [("one", FAIL, lambda v, r: 1)]), A("sort", OPTION),
        A("random_state", RNG),
        A("neighbors",
          [("empty", FAIL, lambda v, r: ()), ("zero", FAIL, lambda v, r: (0,)), ("text", FAIL, lambda v, r: ("a",)),
           ("float", FAIL, lambda v, r: (1.5,))]),
        A("weights",
          [("empty", FAIL, lambda v, r: ()), ("above-1", FAIL, lambda v, r: (0.0, 1.5)),
           ("nan", FAIL, lambda v, r: (np.nan,)), ("text", FAIL, lambda v, r: ("a",))])]))
    add(Case("HybridSearch.simulate", "sortsearch",
             lambda kw: fitted_once(HS, None, budget=6, neighbors=(1, 3), weights=(0.0, 1.0), cv=2).simulate(**kw),
             lambda: dict(responses=X()[:4]), [A("responses", BINARY + SHORT1)]))
    # ---- disco
    add(Case("MethodChooser.fit", "disco",
             est_fit(DC + "MethodChooser", ("candidates", "n_items", "n_splits", "reference", "random_state")),
             lambda: dict(source_outputs=X(),
                          candidates={"random + direct": pub(DC + "RandomDirect")(5),
                                      "anchor": pub(DC + "AnchorCorr")(5)},
                          n_items=5, n_splits=2, random_state=0), [
        A("source_outputs", BINARY, expect={"half": MAY}), A("n_items", INT),
        A("n_splits", INT + [("one", FAIL, lambda v, r: 1)], expect={"huge": MAY}),
        A("candidates",
          [("empty", FAIL, lambda v, r: {}), ("text", FAIL, lambda v, r: "abc"),
           ("bad-value", FAIL, lambda v, r: {"x": 3})]),
        A("reference", [("unknown", FAIL, lambda v, r: "no-such-method"), ("int", FAIL, lambda v, r: 3)]),
        A("random_state", RNG)]))
    add(Case("compare_methods", "disco", fn(DC + "compare_methods"),
             lambda: dict(responses=RM(), splits=SPLIT(), candidates={"random + direct": pub(DC + "RandomDirect")(5)},
                          n_items=5, seeds=[0], n_splits=2, n_jobs=1), [
        A("responses", [("text", FAIL, lambda v, r: "abc"), ("none", FAIL, lambda v, r: None)]),
        A("splits", [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: "abc"),
                     ("overlap", FAIL,
                      lambda v, r: pub("effstats.splits.ModelSplit")(np.arange(6), np.arange(5, NM)))]),
        A("n_items", INT),
        A("seeds",
          [("empty", FAIL, lambda v, r: []), ("text", FAIL, lambda v, r: ["a"]), ("dup", FAIL, lambda v, r: [0, 0])]),
        A("confidence_level", FRACTION), A("n_jobs", INT, expect={"huge": MAY})]))
    # estimators validate n_items in fit
    add(Case("default_candidates", "disco", fn(DC + "default_candidates"), lambda: dict(n_items=5, binary=True),
             [A("n_items", INT, skip=("huge",), expect={k: MAY for k, _, _ in INT}), A("binary", FLAG),
              A("random_items", FLAG)]))
    # ---- irt
    IRT = "effstats.irt.IRT2PL"
    add(Case("IRT2PL.score", "irt", lambda kw: fitted_once(IRT, method="jml", max_iter=20).score(**kw),
             lambda: dict(responses=X()), [A("responses", BINARY + SHORT1)]))
    add(Case("TinyBenchmarks.predict_all", "irt",
             lambda kw: fitted_once("effstats.irt.TinyBenchmarks", None, n_items=6, selection="random",
                                    estimator="p-irt", n_dims=1, n_init=1, random_state=0).predict_all(**kw),
             lambda: dict(target_outputs=X()[:3]), [A("target_outputs", BINARY + SHORT1, expect={"half": MAY})]))
    # ---- reliability
    Sdf = lambda: pd.DataFrame(S(), index=[f"m{i}" for i in range(8)], columns=[f"S{j}" for j in range(6)])
    add(Case("dior_plan", "reliability", fn(RL + "dior_plan"),
             lambda: dict(data=S(), decision="scenarios", objective="kendall", confidence_level=0.9), [
        A("decision", OPTION), A("objective", OPTION), A("confidence_level", FRACTION), A("n_top", INT),
        A("ties", OPTION)]))
    add(Case("DIoRPlan.draw", "reliability", lambda kw: pub(RL + "dior_plan")(S()).draw(**kw), lambda: dict(n=5, rng=0),
             [A("n", INT, skip=("huge",)), A("rng", RNG)]))
    add(Case("comparison_components", "reliability", fn(RL + "comparison_components"), lambda: dict(scores=S()), [
        A("scores", [d for d in REAL if d[0] != "nan"], expect={"ndim+": MAY})]))
    add(Case("flash_helm_orders", "reliability", fn(RL + "flash_helm_orders"),
             lambda: dict(data=EX_RM(), n_orders=2, rng=0, sizes=(2, 4, None), n_boot=10), [
        A("n_orders", INT, skip=("huge",)), A("rng", RNG)]))
    add(Case("simulate_examples", "reliability", fn(RL + "simulate_examples"),
             lambda: dict(table=Sdf(), n_examples=20, noise=1.0, rng=0), [
        A("table", [f for f in FRAME if f[0] != "dup-columns"]), A("n_examples", INT, skip=("huge",)),
        A("noise", POSITIVE, expect={"zero": MAY}), A("rng", RNG)]))
    add(Case("Benchmark.subset_models", "reliability",
             lambda kw: pub(RL + "Benchmark").from_data(S()).subset_models(**kw), lambda: dict(keep=np.arange(4)), [
        A("keep", _positions(8), expect={"duplicate": MAY}, skip=("strings",))]))
    # ---- cli readers
    for f in ("read_helm_json", "read_openllm_csv"):
        add(Case(f"cli.{f}", "cli", fn("effstats.cli." + f), None, [
            A("path",
              files(".json" if "json" in f else ".csv", ("missing", "directory", "empty", "garbage", "text"))
              + [("int", FAIL, lambda v, r: 3)], "SCORES")]))
    add(Case("cli.read_openllm_json", "cli", fn("effstats.cli.read_openllm_json"), None, [
        A("paths",
          files(".json", ("missing", "directory", "empty", "garbage", "text")) + [("int", FAIL, lambda v, r: 3),
                                                                                  ("empty-list", FAIL,
                                                                                   lambda v, r: [])], "SCORES")]))
    names = [("unknown", FAIL, lambda v, r: "no-such-name"), ("empty", FAIL, lambda v, r: ""),
             ("comma", FAIL, lambda v, r: "acc,none"), ("int", FAIL, lambda v, r: 3), ("list", FAIL, lambda v, r: [v])]
    add(Case("cli.read_openllm_json metric", "cli", fn("effstats.cli.read_openllm_json"),
             lambda: dict(paths=_openllm_json()), [A("metric", names, "--metric"), A("filter", names, "--filter")]))
    add(Case("cli.audit openllm-json", "cli", fn("effstats.reliability.audit"),
             lambda: dict(data=_openllm_json(), n_boot=20, seed=0, progress=False), [
        A("metric", names, "--metric"), A("filter", names, "--filter")]))
    # ---- sequential
    add(Case("stagewise_inference", "sequential",
             lambda kw: pub(SQ + "stagewise_inference")(pub(SQ + "design")(k=3), **kw), lambda: dict(z=2.5, look=2), [
        A("z", FINITE), A("look", INT + [("beyond", FAIL, lambda v, r: 4)], skip=("huge",))]))
    add(Case("stagewise_pvalue", "sequential", lambda kw: pub(SQ + "stagewise_pvalue")(pub(SQ + "design")(k=3), **kw),
             lambda: dict(z=2.5, look=2), [
        A("z", FINITE), A("look", INT + [("beyond", FAIL, lambda v, r: 4)], skip=("huge",))]))
    add(Case("plan", "sequential", fn(SQ + "plan"), lambda: dict(effect=0.05, sd=0.5, power=0.9, alpha=0.05, looks=3), [
        A("effect", POSITIVE), A("sd", POSITIVE), A("power", FRACTION), A("alpha", FRACTION),
        A("looks", INT, skip=("huge",)), A("spending", OPTION)]))
    add(Case("conditional_power", "sequential", lambda kw: pub(SQ + "conditional_power")(pub(SQ + "design")(k=3), **kw),
             lambda: dict(look=1, z=1.0), [
        A("look", INT + [("beyond", FAIL, lambda v, r: 4)], skip=("huge",)), A("z", FINITE),
        A("theta", FINITE, skip=("none",))]))
    add(Case("SequentialRanking.start", "sequential", lambda kw: pub(SQ + "SequentialRanking")().start(**kw),
             lambda: dict(model_ids=["a", "b", "c"], max_n=300), [
        A("model_ids",
          [("duplicate", FAIL, lambda v, r: ["a", "a", "b"]), ("one", FAIL, lambda v, r: ["a"]),
           ("text", FAIL, lambda v, r: "abc"), ("int", FAIL, lambda v, r: 3)]),
        A("max_n", INT, skip=("huge",)), A("n_groups", INT, skip=("huge",))]))
    add(Case("SequentialRanking.update", "sequential",
             lambda kw: pub(SQ + "SequentialRanking")(initial=50, batch=50).start(["a", "b", "c"], 300).update(**kw),
             lambda: dict(scores=(np.arange(3 * 100).reshape(3, 100) * np.array([[1], [3], [7]]) % 5
                                  < np.array([[1], [2], [3]])).astype(float)), [
        A("scores", REAL + [("short-rows", FAIL, lambda v, r: v[:2])], skip=("ndim-",))]))
    add(Case("SequentialResult.confidence_interval", "sequential",
             lambda kw: pub(SQ + "SequentialEvaluator")([pub(SQ + "Efficacy")()], rng=0).fit(
                 (np.arange(400) % 3 == 0) * 1.0, (np.arange(400) % 4 == 0) * 1.0).confidence_interval(**kw),
             lambda: dict(), CL))
    # ---- datasets
    add(Case("load_openllm", "datasets", fn("effstats.datasets.load_openllm"), lambda: dict(duplicates="suffix"),
             [A("duplicates", OPTION), A("as_frame", FLAG)]))
    for f in ("load_helm_lite", "load_imagenet_classes"):
        add(Case(f, "datasets", fn("effstats.datasets." + f), lambda: dict(as_frame=False), [A("as_frame", FLAG)]))
    return C


def _have_data() -> bool:
    try:
        pub("effstats.datasets.data_root")()
    except (FileNotFoundError, OSError):
        return False
    return True


def _bad_archive_root(kind: str, probe: str, rng) -> str:
    """A data root whose archive ``probe`` is a malformed file of the given kind."""
    import os

    from fuzz_harness import _write

    root = scratch_dir("root-")
    os.makedirs(os.path.join(root, os.path.dirname(probe)))
    os.replace(_write(kind, rng, ".npz"), os.path.join(root, probe))
    return root


def _add(shared, a, b):
    return shared + a + b


def _tmpdir() -> str:
    return scratch_dir("out-")


def _workflow_reference():
    from effstats import ResponseMatrix

    d = pub("effstats.datasets.simulate_responses")(12, 90, rng=0)
    ids = [f"{t}/{k}" for t, n in (("arc", 50), ("hs", 40)) for k in range(n)]
    return ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(12)], item_ids=ids)


@functools.lru_cache(maxsize=None)
def _workflow_fitted():
    ref = _workflow_reference()
    sel = pub("effstats.workflow.select")(ref.subset(models=range(10)), 20, method="random", seed=0)
    est = pub("effstats.workflow.estimate")(sel, ref.subset(models=[10, 11], items=sel.items))
    return ref, sel, est


def _saved_selection(copy: bool = True) -> str:
    """A saved selection; ``copy=False``: without the copy of the reference data beside the manifest (estimate
    then needs ``reference=``, the data being in memory when it was made)."""
    d = _tmpdir()
    _workflow_fitted()[1].save(d)
    if not copy:
        os.remove(os.path.join(d, "reference.npz"))
    return d


def _sequential_run():
    ref = _workflow_reference()
    return pub("effstats.workflow.SequentialRun").start(ref.subset(models=range(10)), rule="precision", half_width=0.01,
                                                         initial=10, batch=10, seed=0)


def _helm_run_dir() -> str:
    import json
    from pathlib import Path

    root = Path(_tmpdir())
    for m in ("a/x", "b/y"):
        run = root / f"mmlu:subject=anatomy,model={m.replace('/', '_')}"
        run.mkdir(parents=True)
        (run / "run_spec.json").write_text(json.dumps({"name": run.name, "adapter_spec": {"model": m}}))
        (run / "per_instance_stats.json").write_text(json.dumps([
            {"instance_id": f"id{i}", "train_trial_index": 0,
             "stats": [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": float(i % 2),
                        "mean": float(i % 2)}]}
            for i in range(6)]))
    return str(root)


def _workflow_cases() -> list[Case]:
    C: list[Case] = []
    add = C.append
    W = "effstats.workflow."
    ref = lambda: _workflow_reference().subset(models=range(10))  # noqa: E731
    PATHLIKE = [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None),
                ("missing", FAIL, lambda v, r: "/nonexistent/effstats"),
                ("list", FAIL, lambda v, r: [1, 2])]
    add(Case("select", "workflow", fn(W + "select"), lambda: dict(reference=ref(), budget=20, method="random", seed=0),
             [
        A("reference", PATHLIKE + [("text-file", FAIL, lambda v, r: __file__)]), A("budget", INT), A("method", OPTION),
        A("seed", INT, expect={"zero": MAY}, skip=("huge",)), A("format", OPTION), A("duplicates", OPTION),
        A("split", [("other", FAIL, lambda v, r: "valid"), ("int", FAIL, lambda v, r: 3)]),
        A("trials", [("separate", FAIL, lambda v, r: "separate"), ("negative", FAIL, lambda v, r: -1),
                     ("text", FAIL, lambda v, r: "all")]),
        A("target_error",
          [("negative", FAIL, lambda v, r: -1.0), ("text", FAIL, lambda v, r: "abc"), ("huge", FAIL, lambda v, r: 1e9)],
          "budget"), A("weights", OPTION)]))
    add(Case("estimate", "workflow", fn(W + "estimate"),
             lambda: dict(selection=_workflow_fitted()[1],
                          new_results=_workflow_reference().subset(models=[10], items=_workflow_fitted()[1].items)), [
        A("selection", PATHLIKE),
        A("new_results", PATHLIKE + [("other-items", FAIL, lambda v, r: _workflow_reference().subset(models=[10]))]),
        A("duplicates", OPTION), A("weights", OPTION),
        A("restrict_to_manifest", [("text", FAIL, lambda v, r: "yes"), ("int", FAIL, lambda v, r: 3)]),
        A("models", [("absent", FAIL, lambda v, r: "nobody"), ("int", FAIL, lambda v, r: 3),
                     ("empty", FAIL, lambda v, r: [])])]))
    add(Case("estimate(saved)", "workflow", fn(W + "estimate"),
             lambda: dict(selection=_saved_selection(copy=False),
                          new_results=_workflow_reference().subset(models=[10], items=_workflow_fitted()[1].items),
                          reference=ref()), [
        A("reference",
          PATHLIKE + [("other-data", FAIL, lambda v, r: _workflow_reference().subset(models=range(1, 11)))])]))
    add(Case("read_results", "workflow", fn(W + "read_results"), lambda: dict(source=_workflow_reference()), [
        A("source",
          PATHLIKE + files(".csv", ("missing", "directory", "empty", "garbage")) + files(".jsonl",
                                                                                         ("garbage", "empty"))),
        A("format", OPTION), A("duplicates", OPTION)]))
    add(Case("content_hash", "workflow", fn(W + "content_hash"), lambda: dict(rm=_workflow_reference()), [
        A("rm",
          [("array", FAIL, lambda v, r: np.zeros((2, 2))), ("none", FAIL, lambda v, r: None),
           ("text", FAIL, lambda v, r: "abc")])]))
    add(Case("allocate_budget", "workflow", fn(W + "allocate_budget"),
             lambda: dict(sizes=pd.Series({"a": 30, "b": 10}), budget=8), [
        A("sizes",
          [("empty", FAIL, lambda v, r: pd.Series([], dtype=int)), ("zero", FAIL, lambda v, r: pd.Series({"a": 0})),
                    ("float", FAIL, lambda v, r: pd.Series({"a": 1.5})), ("list", FAIL, lambda v, r: [3, 4])]),
        A("budget", INT, skip=("huge",)), A("minimum", INT, skip=("huge",)),
        A("shares", [("nan", FAIL, lambda v, r: pd.Series({"a": np.nan, "b": 1.0})),
                     ("negative", FAIL, lambda v, r: {"a": -1.0, "b": 1.0}),
                     ("zeros", FAIL, lambda v, r: {"a": 0, "b": 0}),
                     ("a-task-short", FAIL, lambda v, r: {"a": 1.0}), ("list", FAIL, lambda v, r: [1.0, 2.0])])]))
    add(Case("neyman_shares", "workflow", fn(W + "neyman_shares"),
             lambda: dict(rm=_workflow_reference(), tasks=[i.split("/")[0] for i in _workflow_reference().item_ids]), [
        A("rm", [("array", FAIL, lambda v, r: np.zeros((2, 2))), ("none", FAIL, lambda v, r: None)]),
        A("tasks", [("short", FAIL, lambda v, r: ["arc"] * 3), ("text", FAIL, lambda v, r: "arc"),
                    ("none", FAIL, lambda v, r: None)]),
        A("weights", OPTION)]))
    add(Case("write_lm_eval_samples", "workflow", fn(W + "write_lm_eval_samples"),
             lambda: dict(responses=_workflow_reference().subset(models=[0, 1]), directory=_tmpdir()), [
        A("responses", [("array", FAIL, lambda v, r: np.zeros((2, 2))), ("none", FAIL, lambda v, r: None)]),
        A("directory", [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None)]),
        A("n_choices", INT, skip=("huge",)),
        A("numbers", OPTION), A("timestamp", [("text", FAIL, lambda v, r: "yesterday"), ("int", FAIL, lambda v, r: 3)]),
        A("rng", RNG)]))
    add(Case("Selection.save", "workflow", lambda kw: _workflow_fitted()[1].save(**kw),
             lambda: dict(directory=_tmpdir()), [
        A("directory",
          [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None), ("file", FAIL, lambda v, r: __file__)])]))
    add(Case("Selection.load", "workflow", lambda kw: pub(W + "Selection").load(**kw),
             lambda: dict(directory=_saved_selection()), [
        A("directory", PATHLIKE + files(".json", ("empty", "garbage", "text")))]))
    for meth in ("confidence_interval", "rank_interval", "to_frame", "tasks", "to_markdown"):
        add(Case(f"Estimate.{meth}", "workflow",
                 (lambda meth: lambda kw: getattr(_workflow_fitted()[2], meth)(**kw))(meth),
                 lambda: dict(confidence_level=0.9), [A("confidence_level", FRACTION)]))
    add(Case("Estimate.save", "workflow", lambda kw: _workflow_fitted()[2].save(**kw),
             lambda: dict(directory=_tmpdir()), [
        A("directory",
          [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None), ("file", FAIL, lambda v, r: __file__)]),
        A("confidence_level", FRACTION)]))
    add(Case("SequentialRun.start", "workflow", fn(W + "SequentialRun.start"),
             lambda: dict(reference=ref(), rule="precision", half_width=0.05, initial=10, batch=10, seed=0), [
        A("reference", PATHLIKE), A("rule", OPTION), A("initial", INT), A("batch", INT),
        A("seed", INT, expect={"zero": MAY}, skip=("huge",)),
        A("half_width", FRACTION, expect={"one": MAY}), A("alpha", FRACTION), A("spending", OPTION),
        A("against", [("unknown", FAIL, lambda v, r: "nobody"), ("int", FAIL, lambda v, r: 3)])]))
    add(Case("SequentialRun.start(efficacy)", "workflow", fn(W + "SequentialRun.start"),
             lambda: dict(reference=ref(), rule="efficacy", against="m0", initial=10, batch=10, seed=0), [
        A("against",
          [("unknown", FAIL, lambda v, r: "nobody"), ("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None)]),
        A("alternative", OPTION)]))
    add(Case("SequentialRun.update", "workflow", lambda kw: _sequential_run().update(**kw),
             lambda: dict(new_results=_workflow_reference().subset(models=[10], items=_sequential_run().next_items)), [
        A("new_results", PATHLIKE + [("other-items", FAIL, lambda v, r: _workflow_reference().subset(models=[10])),
                                     ("two-models", FAIL,
                                      lambda v, r: _workflow_reference().subset(models=[10, 11],
                                                                                items=_sequential_run().next_items))]),
        A("model", [("unknown", FAIL, lambda v, r: "nobody"), ("int", FAIL, lambda v, r: 3)]),
        A("restrict_to_manifest", [("text", FAIL, lambda v, r: "yes"), ("int", FAIL, lambda v, r: 3)])]))
    add(Case("SequentialRun.save", "workflow", lambda kw: _sequential_run().save(**kw),
             lambda: dict(directory=_tmpdir()), [
        A("directory",
          [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None), ("file", FAIL, lambda v, r: __file__)])]))
    add(Case("SequentialRun.load", "workflow", lambda kw: pub(W + "SequentialRun").load(**kw),
             lambda: dict(directory=(lambda d: (_sequential_run().save(d), d)[1])(_tmpdir())), [
        A("directory", PATHLIKE + files(".json", ("empty", "garbage", "text")))]))
    add(Case("read_helm_runs", "datasets", fn("effstats.datasets.read_helm_runs"),
             lambda: dict(path_or_paths=_helm_run_dir()), [
        A("path_or_paths", PATHLIKE + files(".json", ("empty", "garbage", "text"))),
        A("metric", [("unknown", FAIL, lambda v, r: "nope"),
                                                                                              ("int", FAIL,
                                                                                               lambda v, r: 3)]),
        A("split", [("unknown", FAIL, lambda v, r: "nope")]), A("duplicates", OPTION),
        A("trials", [("unknown", FAIL, lambda v, r: 7), ("negative", FAIL, lambda v, r: -1),
                     ("text", FAIL, lambda v, r: "all"), ("bool", FAIL, lambda v, r: True)])]))
    # one audit for every call of the two cases below (the frozen result is only read by to_html and save): the
    # audit of HELM is what costs, not the calls whose arguments are fuzzed
    audit_result = functools.lru_cache(maxsize=None)(
        lambda: pub("effstats.reliability.audit")(pub("effstats.datasets.load_helm")(), n_boot=20, seed=0,
                                                  progress=False))
    add(Case("AuditResult.to_html", "reliability", lambda kw: audit_result().to_html(**kw),
             lambda: dict(path=os.path.join(_tmpdir(), "r.html")), [
        A("path", [("int", FAIL, lambda v, r: 3), ("directory", FAIL, lambda v, r: _tmpdir())])]))
    add(Case("AuditResult.save", "reliability", lambda kw: audit_result().save(**kw), lambda: dict(out=_tmpdir()), [
        A("out",
          [("int", FAIL, lambda v, r: 3), ("none", FAIL, lambda v, r: None), ("file", FAIL, lambda v, r: __file__)])]))
    return C
