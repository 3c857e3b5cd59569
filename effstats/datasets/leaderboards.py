"""Public leaderboard tables bundled with effstats (aggregate scores, not per-example outputs).

Copied from version 1.0.1 of the ``benchbench`` package (Zhang & Hardt, ICML 2024; MIT licence), see
``effstats/datasets/data/leaderboards/PROVENANCE.md``:

============  ==========================================================  ===================
name          what                                                        models × columns
============  ==========================================================  ===================
helm          HELM classic, core-scenario accuracies (+ mean win rate)     67 × 16 scenarios
helm_lite     HELM Lite (+ mean win rate)                                  91 × 10 scenarios
openllm       Open LLM Leaderboard v1 (percent, rescaled to [0, 1])        100 × 6 tasks
mmlu          Open LLM Leaderboard MMLU per subject (5-shot accuracy)      98 × 57 subjects
imagenet      torchvision ImageNet models, per-class val accuracy          112 × 1000 classes
============  ==========================================================  ===================

Every loader returns a ``kind="score"`` :class:`~effstats.ResponseMatrix` (models × scenarios / subjects / classes;
``"-"`` = not evaluated → ``missing``) with the metric in ``items`` and the published aggregates in ``models``, or
with ``as_frame=True`` the tidy long table (one row per evaluated (model, column) pair).
"""
from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass
from importlib import resources
from typing import Callable, Literal

import numpy as np
import pandas as pd

from .._shared import _is_float, _plain
from .._validation import check_flag
from ..responses import ResponseMatrix

__all__ = [
    "load_leaderboard",
    "load_helm",
    "load_helm_lite",
    "load_openllm",
    "load_mmlu",
    "load_imagenet_classes",
    "list_leaderboards",
]

Duplicates = Literal["suffix", "first"]


@functools.lru_cache(maxsize=None)
def _raw(relpath: str) -> bytes:
    # bundled package data: read once; tables are small (<= 0.55 MB uncompressed)
    return resources.files("effstats.datasets").joinpath("data", "leaderboards", *relpath.split("/")).read_bytes()


def _read_tsv(relpath: str) -> pd.DataFrame:
    """The bundled table as strings (no NA parsing: "-" is handled explicitly)."""
    return pd.read_csv(
        io.BytesIO(_raw(relpath)),
        sep="\t",
        dtype=str,
        keep_default_na=False,
        compression="gzip" if relpath.endswith(".gz") else None,
    )


def _numeric(df: pd.DataFrame, name: str, scale: float = 1.0, missing: tuple[str, ...] = ("-",),
             where: Callable[[int], str] | None = None) -> np.ndarray:
    """Float matrix of a string table, NaN at cells equal to a ``missing`` marker or blank.

    Parsed in numpy rather than with ``DataFrame.replace`` so that no pandas down-casting warning can arise;
    a cell that is neither a number nor a marker raises ``ValueError`` naming ``name`` and the column, and, given
    ``where`` (the text naming a row by its number, e.g. its line in a file), the row.
    """
    arr = df.to_numpy(dtype=str)
    blank = np.char.strip(arr) == ""
    miss = blank | np.isin(arr, list(missing))
    out = np.full(arr.shape, np.nan)
    width = arr.dtype.itemsize // 4
    if width and arr.size:  # numpy reads "1_0" as 10 (as float does); a table's cell "1_0" is not a number
        under = (np.ascontiguousarray(arr).view(np.uint32).reshape(*arr.shape, width) == ord("_")).any(axis=-1)
        under &= ~miss
        if under.any():
            i, j = (int(k) for k in np.argwhere(under)[0])
            raise ValueError(f"{name}: column {df.columns[j]!r} has non-numeric values, e.g. {str(arr[i, j])!r} "
                             f"({f'row {i + 1}' if where is None else where(i)}: numbers are written without '_')")
    for j, col in enumerate(df.columns):  # one vectorised conversion per column (few columns)
        ok = ~miss[:, j]
        try:
            out[ok, j] = arr[ok, j].astype(float)
        except ValueError:
            i = next(i for i in np.flatnonzero(ok) if not _is_float(arr[i, j]))
            at = "" if where is None else f" ({where(int(i))})"
            raise ValueError(f"{name}: column {col!r} has non-numeric values, e.g. {_plain(arr[i, j])!r}{at}") from None
    nan = np.isnan(out) & ~miss
    if nan.any():
        at = "" if where is None else f" ({where(int(np.argmax(nan.any(axis=1))))})"
        raise ValueError(f"{name}: 'nan' cells found{at}; mark cells that were not evaluated with {missing[0]!r}")
    return out / scale


def _unique_ids(names: pd.Series, duplicates: Duplicates) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """Unique model ids, kept row positions and the 1-based occurrence number of each kept row.

    ``"suffix"`` keeps every row; the k-th (k >= 2) row of a repeated name gets the id ``"<name>#k"`` in table
    (rank) order. ``"first"`` keeps only the first (highest-ranked) row of each name.
    """
    if duplicates not in ("suffix", "first"):
        raise ValueError(f"duplicates: expected 'suffix' or 'first', got {duplicates!r}")
    occ = names.groupby(names).cumcount().to_numpy() + 1
    if duplicates == "first":
        keep = np.flatnonzero(occ == 1)
        return pd.Index(names.to_numpy()[keep], name="model"), keep, occ[keep]
    ids = [n if k == 1 else f"{n}#{k}" for n, k in zip(names, occ)]
    return pd.Index(ids, name="model"), np.arange(len(names)), occ


def _finish(rm: ResponseMatrix, as_frame: bool) -> ResponseMatrix | pd.DataFrame:
    if not check_flag(as_frame, "as_frame"):
        return rm
    long = rm.to_long()
    meta = rm.models.add_prefix("model_") if len(rm.models.columns) else None
    if meta is not None:
        long = long.merge(meta, left_on="model", right_index=True, how="left")
    return long.reset_index(drop=True)


def _scenario_metric(col: str) -> tuple[str, str]:
    scen, _, metric = col.rpartition(" - ")
    return (scen, metric) if scen else (col, "")


# ----------------------------------------------------------------------------------------------------- HELM
def _helm_table(relpath: str, model_col: str, name: str) -> ResponseMatrix:
    df = _read_tsv(relpath)
    models = df[model_col]
    cols = [c for c in df.columns if c not in (model_col, "Mean win rate")]
    vals = _numeric(df[cols], name)
    scen_metric = [_scenario_metric(c) for c in cols]
    item_ids = pd.Index([s for s, _ in scen_metric], name="scenario")
    win = _numeric(df[["Mean win rate"]], name)[:, 0]
    return ResponseMatrix(
        vals,
        kind="score",
        nan_as_missing=True,
        model_ids=pd.Index(models, name="model"),
        item_ids=item_ids,
        models=pd.DataFrame(
            {
                "mean_win_rate": win,
                "size": models.map(_size_from_name).to_numpy(),
                "release_date": pd.to_datetime(models.map(_date_from_name), format="%Y%m%d",
                                               errors="coerce").to_numpy(),
            },
            index=models.to_numpy(),
        ),
        items=pd.DataFrame(
            {"scenario": item_ids, "metric": [m for _, m in scen_metric], "column": cols}, index=item_ids
        ),
    )


def _size_from_name(name: str) -> float:
    """Parameter count stated in a HELM model name ("Llama 2 (70B)" -> 7e10); NaN when the name gives none."""
    m = re.search(r"\((\d+(?:\.\d+)?)\s*([MB])\)", name)
    return float(m.group(1)) * (1e9 if m.group(2) == "B" else 1e6) if m else np.nan


def _date_from_name(name: str) -> str | None:
    """Version date stated in a model name ("GPT-4o (2024-05-13)", "Claude 3.5 Sonnet (20240620)") as YYYYMMDD."""
    m = re.search(r"\((\d{4})-?(\d{2})-?(\d{2})\)", name)
    return "".join(m.groups()) if m else None


def load_helm(*, as_frame: bool = False) -> ResponseMatrix | pd.DataFrame:
    """HELM classic: 67 models × 16 core scenarios, each scored by its main metric (EM, F1, RR@10, ROUGE-2 ...).

    Parameters
    ----------
    as_frame : bool, default=False
        Return the tidy long table (columns ``model``, ``item``, ``score``, ``scenario``, ``metric``, ``column``,
        ``model_mean_win_rate``, ``model_size``, ``model_release_date``) of the evaluated cells instead.

    Returns
    -------
    ResponseMatrix or DataFrame
        ``kind="score"``, shape (67, 16); cells published as ``"-"`` (not evaluated) are ``missing``. ``items``:
        ``scenario``, ``metric``, ``column`` (the published header); ``models``: ``mean_win_rate`` (as published,
        over all HELM metrics, so not recomputable from this table alone), ``size`` (parameters, from names such
        as "Llama 2 (70B)"; NaN when the name states none) and ``release_date`` (the version date stated in names
        such as "GPT-4o (2024-05-13)", NaT otherwise).

    See Also
    --------
    effstats.datasets.load_helm_lite : HELM Lite.
    effstats.datasets.read_helm_runs : per-instance results of your own HELM runs.
    effstats.datasets.load_leaderboard : any bundled table by name.
    effstats.datasets.list_leaderboards : what is bundled.

    References
    ----------
    Liang, P., Bommasani, R., Lee, T., Tsipras, D., Soylu, D., Yasunaga, M., Zhang, Y., Narayanan, D., Wu, Y.,
    Kumar, A. et al. (2023). Holistic Evaluation of Language Models. *Transactions on Machine Learning Research*,
    arXiv:2211.09110.

    Zhang, G. and Hardt, M. (2024). Inherent Trade-Offs between Diversity and Stability in Multi-Task Benchmarks.
    *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2405.01719 (the
    ``benchbench`` package the tables are copied from).

    Examples
    --------
    >>> from effstats.datasets import load_helm
    >>> helm = load_helm()
    >>> helm
    ResponseMatrix(67 models × 16 items, kind='score', 196 missing, item groups ['scenario', 'metric', 'column'])
    >>> helm.accuracy().sort_values(ascending=False).head(3).round(3)
    model_ids
    Llama 2 (70B)         0.675
    LLaMA (65B)           0.654
    gpt-3.5-turbo-0301    0.647
    Name: accuracy, dtype: float64
    """
    return _finish(_helm_table("helm/accuracy.tsv", "Model/adapter", "helm"), as_frame)


def load_helm_lite(*, as_frame: bool = False) -> ResponseMatrix | pd.DataFrame:
    """HELM Lite: 91 models × 10 scenarios (NarrativeQA F1 ... WMT 2014 BLEU-4).

    The same layout as :func:`effstats.datasets.load_helm`.

    Parameters
    ----------
    as_frame : bool, default=False
        Return the tidy long table of the evaluated cells instead.

    Returns
    -------
    ResponseMatrix or DataFrame
        ``kind="score"``, shape (91, 10), with the columns of :func:`effstats.datasets.load_helm`.

    See Also
    --------
    effstats.datasets.load_helm : HELM classic.
    effstats.datasets.load_leaderboard : any bundled table by name.
    effstats.datasets.list_leaderboards : what is bundled.

    References
    ----------
    Liang, P., Bommasani, R., Lee, T., Tsipras, D., Soylu, D., Yasunaga, M., Zhang, Y., Narayanan, D., Wu, Y.,
    Kumar, A. et al. (2023). Holistic Evaluation of Language Models. *Transactions on Machine Learning Research*,
    arXiv:2211.09110.

    Zhang, G. and Hardt, M. (2024). Inherent Trade-Offs between Diversity and Stability in Multi-Task Benchmarks.
    *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2405.01719 (the
    ``benchbench`` package the tables are copied from).

    Examples
    --------
    >>> from effstats.datasets import load_helm_lite
    >>> lite = load_helm_lite()
    >>> lite.shape, lite.item_ids[:3].tolist()
    ((91, 10), ['NarrativeQA', 'NaturalQuestions (open)', 'NaturalQuestions (closed)'])
    """
    return _finish(_helm_table("helm_lite/leaderboard.tsv", "Model", "helm_lite"), as_frame)


# ----------------------------------------------------------------------------------------------------- Open LLM
# Open LLM Leaderboard v1 task settings (metric, few-shot count), as documented by the leaderboard.
_OPENLLM_TASKS = {
    "ARC": ("acc_norm", 25),
    "HellaSwag": ("acc_norm", 10),
    "MMLU": ("acc", 5),
    "TruthfulQA": ("mc2", 0),
    "Winogrande": ("acc", 5),
    "GSM8K": ("acc", 5),
}
_OPENLLM_TYPES = {"🟢": "pretrained", "🔶": "fine-tuned", "⭕": "instruction-tuned", "🟦": "RL-tuned"}


def load_openllm(*, as_frame: bool = False, duplicates: Duplicates = "suffix") -> ResponseMatrix | pd.DataFrame:
    """Open LLM Leaderboard (v1): 100 rows × 6 tasks, scores rescaled from percent to [0, 1].

    Parameters
    ----------
    as_frame : bool, default=False
        Return the tidy long table instead.
    duplicates : {"suffix", "first"}, default="suffix"
        The table lists 13 model names twice (separate submissions, e.g. different precision or revision; 5 rows
        are exact copies). ``"suffix"`` keeps all 100 rows and makes ids unique in rank order (the second row of
        ``name`` becomes ``"name#2"``); ``"first"`` keeps only the first (better-ranked) row of each name (87
        models).

    Returns
    -------
    ResponseMatrix or DataFrame
        ``kind="score"``; ``items``: ``task``, ``metric``, ``n_shot``; ``models``: ``name`` (as published),
        ``occurrence`` (1 for the first row of a name), ``model_type`` (pretrained / fine-tuned /
        instruction-tuned / RL-tuned, from the leaderboard's symbol), ``average`` (published, in [0, 1]).

    See Also
    --------
    effstats.datasets.load_mmlu : MMLU per subject from the same leaderboard.
    effstats.cli.read_openllm_csv : the leaderboard's current CSV export.
    effstats.datasets.load_leaderboard : any bundled table by name.
    effstats.datasets.list_leaderboards : what is bundled.

    References
    ----------
    Beeching, E., Fourrier, C., Habib, N., Han, S., Lambert, N., Rajani, N., Sanseviero, O., Tunstall, L. and
    Wolf, T. (2023). Open LLM Leaderboard. Hugging Face.

    Zhang, G. and Hardt, M. (2024). Inherent Trade-Offs between Diversity and Stability in Multi-Task Benchmarks.
    *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2405.01719 (the
    ``benchbench`` package the tables are copied from).

    Examples
    --------
    >>> from effstats.datasets import load_openllm
    >>> board = load_openllm()
    >>> board.item_ids.tolist()
    ['ARC', 'HellaSwag', 'MMLU', 'TruthfulQA', 'Winogrande', 'GSM8K']
    >>> board.n_models, load_openllm(duplicates="first").n_models
    (100, 87)
    """
    df = _read_tsv("openllm/leaderboard.tsv")
    ids, keep, occ = _unique_ids(df["Model"], duplicates)
    df = df.iloc[keep]
    tasks = list(_OPENLLM_TASKS)
    vals = _numeric(df[tasks], "openllm", scale=100.0)
    item_ids = pd.Index(tasks, name="task")
    models = pd.DataFrame(
        {
            "name": df["Model"].to_numpy(),
            "occurrence": occ,
            "model_type": df["T"].map(_OPENLLM_TYPES).fillna("unknown").to_numpy(),
            "average": _numeric(df[["Average"]], "openllm", scale=100.0)[:, 0],
        },
        index=ids,
    )
    items = pd.DataFrame(
        {"task": tasks, "metric": [_OPENLLM_TASKS[t][0] for t in tasks],
         "n_shot": [_OPENLLM_TASKS[t][1] for t in tasks]},
        index=item_ids,
    )
    rm = ResponseMatrix(vals, kind="score", nan_as_missing=True, model_ids=ids, item_ids=item_ids, models=models,
                        items=items)
    return _finish(rm, as_frame)


# ----------------------------------------------------------------------------------------------------- MMLU
def load_mmlu(*, as_frame: bool = False, duplicates: Duplicates = "suffix") -> ResponseMatrix | pd.DataFrame:
    """MMLU per subject from the Open LLM Leaderboard details: 98 runs × 57 subjects (5-shot accuracy).

    Parameters
    ----------
    as_frame : bool, default=False
        Return the tidy long table instead.
    duplicates : {"suffix", "first"}, default="suffix"
        16 rows repeat a model name (several evaluation runs of one model); handled as in
        :func:`effstats.datasets.load_openllm`.

    Returns
    -------
    ResponseMatrix or DataFrame
        ``kind="score"``, shape (98, 57); ``items``: ``subject``, ``metric`` (``"acc"``), ``n_shot`` (5);
        ``models``: ``name`` (``org/model``), ``occurrence``, ``run`` (the leaderboard's run timestamp),
        ``average``.

    See Also
    --------
    effstats.datasets.load_openllm : the leaderboard's six tasks.
    effstats.datasets.load_leaderboard : any bundled table by name.
    effstats.datasets.list_leaderboards : what is bundled.

    References
    ----------
    Hendrycks, D., Burns, C., Basart, S., Zou, A., Mazeika, M., Song, D. and Steinhardt, J. (2021). Measuring
    Massive Multitask Language Understanding. *International Conference on Learning Representations (ICLR)*,
    arXiv:2009.03300.

    Beeching, E., Fourrier, C., Habib, N., Han, S., Lambert, N., Rajani, N., Sanseviero, O., Tunstall, L. and
    Wolf, T. (2023). Open LLM Leaderboard. Hugging Face.

    Examples
    --------
    >>> from effstats.datasets import load_mmlu
    >>> mmlu = load_mmlu()
    >>> mmlu.shape, mmlu.item_ids[:3].tolist()
    ((98, 57), ['abstract_algebra', 'anatomy', 'astronomy'])
    """
    df = _read_tsv("mmlu/leaderboard.tsv.gz")
    names = df["model_name"].str.replace(r"^details_", "", regex=True).str.replace("__", "/", n=1, regex=False)
    ids, keep, occ = _unique_ids(names, duplicates)
    df = df.iloc[keep]
    cols = [c for c in df.columns if c.startswith("harness|hendrycksTest-")]
    subjects = [re.sub(r"^harness\|hendrycksTest-|\|\d+$", "", c) for c in cols]
    item_ids = pd.Index(subjects, name="subject")
    models = pd.DataFrame(
        {
            "name": names.to_numpy()[keep],
            "occurrence": occ,
            "run": df["split_name"].to_numpy(),
            "average": _numeric(df[["average_score"]], "mmlu")[:, 0],
        },
        index=ids,
    )
    items = pd.DataFrame({"subject": subjects, "metric": "acc", "n_shot": 5}, index=item_ids)
    rm = ResponseMatrix(_numeric(df[cols], "mmlu"), kind="score", nan_as_missing=True, model_ids=ids, item_ids=item_ids,
                        models=models, items=items)
    return _finish(rm, as_frame)


# ----------------------------------------------------------------------------------------------------- ImageNet
def _parse_params(s: str) -> float:
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMB]?)\s*", s)
    if not m:
        return np.nan
    return float(m.group(1)) * {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9}[m.group(2)]


def load_imagenet_classes(*, as_frame: bool = False) -> ResponseMatrix | pd.DataFrame:
    """Per-class ImageNet validation accuracy of 112 torchvision weights: 112 × 1000 classes (50 images each).

    Parameters
    ----------
    as_frame : bool, default=False
        Return the tidy long table instead.

    Returns
    -------
    ResponseMatrix or DataFrame
        ``kind="score"``, shape (112, 1000); values are multiples of 1/50. Item ids are the class ids 0..999
        (sorted-wnid order); ``items``: ``class_id``, ``n_images`` (50). Model ids are the torchvision weight
        names (``"ResNet50_Weights.IMAGENET1K_V1"``); ``models``: ``architecture``, ``acc1`` / ``acc5``
        (published top-1 / top-5, in [0, 1]), ``acc`` (benchbench's re-evaluated top-1), ``params`` (count),
        ``gflops``.

    See Also
    --------
    effstats.datasets.load_imagenet_predictions : per-image predictions, where available.
    effstats.datasets.load_leaderboard : any bundled table by name.
    effstats.datasets.list_leaderboards : what is bundled.

    References
    ----------
    Russakovsky, O., Deng, J., Su, H., Krause, J., Satheesh, S., Ma, S., Huang, Z., Karpathy, A., Khosla, A.,
    Bernstein, M., Berg, A. C. and Fei-Fei, L. (2015). ImageNet Large Scale Visual Recognition Challenge.
    *International Journal of Computer Vision* 115(3), 211-252.

    Zhang, G. and Hardt, M. (2024). Inherent Trade-Offs between Diversity and Stability in Multi-Task Benchmarks.
    *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2405.01719 (the
    ``benchbench`` package the tables are copied from).

    Examples
    --------
    >>> from effstats.datasets import load_imagenet_classes
    >>> classes = load_imagenet_classes()
    >>> classes.shape
    (112, 1000)
    >>> float(classes.models.loc["ResNet50_Weights.IMAGENET1K_V1", "acc1"])
    0.7613
    """
    df = _read_tsv("imagenet/leaderboard.tsv.gz")
    cols = [f"acc_{k}" for k in range(1000)]
    ids = pd.Index(df["Weight"], name="model")
    item_ids = pd.Index(np.arange(1000), name="class_id")
    models = pd.DataFrame(
        {
            "architecture": df["Model"].to_numpy(),
            "acc1": _numeric(df[["Acc@1"]], "imagenet", 100.0)[:, 0],
            "acc5": _numeric(df[["Acc@5"]], "imagenet", 100.0)[:, 0],
            "acc": _numeric(df[["acc"]], "imagenet")[:, 0],
            "params": df["Params"].map(_parse_params).to_numpy(),
            "gflops": _numeric(df[["GFLOPS"]], "imagenet")[:, 0],
        },
        index=ids,
    )
    items = pd.DataFrame({"class_id": np.arange(1000), "n_images": 50}, index=item_ids)
    rm = ResponseMatrix(_numeric(df[cols], "imagenet"), kind="score", nan_as_missing=True, model_ids=ids,
                        item_ids=item_ids, models=models, items=items)
    return _finish(rm, as_frame)


# ----------------------------------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class _Board:
    loader: Callable[..., ResponseMatrix | pd.DataFrame]
    file: str
    columns: str
    description: str


_BOARDS: dict[str, _Board] = {
    "helm": _Board(load_helm, "helm/accuracy.tsv", "scenario",
                   "HELM classic core-scenario accuracies (Liang et al. 2023)"),
    "helm_lite": _Board(load_helm_lite, "helm_lite/leaderboard.tsv", "scenario", "HELM Lite leaderboard"),
    "openllm": _Board(load_openllm, "openllm/leaderboard.tsv", "task", "Open LLM Leaderboard v1 (scores / 100)"),
    "mmlu": _Board(load_mmlu, "mmlu/leaderboard.tsv.gz", "subject", "Open LLM Leaderboard MMLU per subject, 5-shot"),
    "imagenet": _Board(load_imagenet_classes, "imagenet/leaderboard.tsv.gz", "class",
                       "torchvision ImageNet per-class val accuracy"),
}
_ALIASES = {"helm_classic": "helm", "open_llm": "openllm", "imagenet_classes": "imagenet"}


def load_leaderboard(name: str, *, as_frame: bool = False, **kwargs) -> ResponseMatrix | pd.DataFrame:
    """Load a bundled leaderboard by name.

    Parameters
    ----------
    name : {"helm", "helm_lite", "openllm", "mmlu", "imagenet"}
        Also accepted: ``"helm_classic"``, ``"open_llm"``, ``"imagenet_classes"``.
    as_frame : bool, default=False
        Tidy long DataFrame instead of a :class:`effstats.ResponseMatrix`.
    **kwargs
        Passed to the specific loader (e.g. ``duplicates=`` for ``openllm`` / ``mmlu``).

    Returns
    -------
    ResponseMatrix or DataFrame

    Raises
    ------
    ValueError
        For an unknown ``name``, listing the known ones.

    See Also
    --------
    effstats.datasets.list_leaderboards : the names and sizes.

    Examples
    --------
    >>> from effstats.datasets import load_leaderboard
    >>> load_leaderboard("helm_lite")
    ResponseMatrix(91 models × 10 items, kind='score', 1 missing, item groups ['scenario', 'metric', 'column'])
    >>> load_leaderboard("helm", as_frame=True)[["model", "item", "score"]].head(2)
               model         item  score
    0  Llama 2 (70B)         MMLU  0.582
    1  Llama 2 (70B)        BoolQ  0.886
    """
    key = _ALIASES.get(name, name) if isinstance(name, str) else None
    if key not in _BOARDS:
        raise ValueError(f"name: unknown leaderboard {name!r}; expected one of {sorted(_BOARDS)}")
    return _BOARDS[key].loader(as_frame=as_frame, **kwargs)


def list_leaderboards() -> pd.DataFrame:
    """The bundled leaderboards, one row per name.

    Returns
    -------
    DataFrame
        Indexed by ``name``, with ``n_models``, ``n_columns``, ``columns`` (what a column is), ``n_missing``
        (cells not evaluated), ``file`` and ``description``.

    See Also
    --------
    effstats.datasets.load_leaderboard : load one by name.

    References
    ----------
    Zhang, G. and Hardt, M. (2024). Inherent Trade-Offs between Diversity and Stability in Multi-Task Benchmarks.
    *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2405.01719 (the
    ``benchbench`` package the tables are copied from).

    Examples
    --------
    >>> from effstats.datasets import list_leaderboards
    >>> list_leaderboards()[["n_models", "n_columns", "columns", "n_missing"]]
               n_models  n_columns   columns  n_missing
    name
    helm             67         16  scenario        196
    helm_lite        91         10  scenario          1
    openllm         100          6      task          0
    mmlu             98         57   subject          0
    imagenet        112       1000     class          0
    """
    rows = []
    for name, b in _BOARDS.items():
        rm = b.loader()
        rows.append(
            {
                "name": name,
                "n_models": rm.n_models,
                "n_columns": rm.n_items,
                "columns": b.columns,
                "n_missing": 0 if rm.missing is None else int(rm.missing.sum()),
                "file": b.file,
                "description": b.description,
            }
        )
    return pd.DataFrame(rows).set_index("name")
