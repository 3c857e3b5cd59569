"""The validated models × items table with its scenario / subscenario hierarchy."""
from __future__ import annotations

import datetime
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from .._results import ReadOnlyFields, read_only_fields
from .._shared import _caller_stacklevel, _plain
from .._validation import check_array
from .._plain_exceptions import InputTypeError
from ..responses import ResponseMatrix

Score = Literal["mwr", "mean", "mean_of_means"]
Decision = Literal["scenarios", "subscenarios", "examples", "prompts"]
Objective = Literal["kendall", "weighted_tau", "best_model", "model_quality"]
_SCORES = ("mwr", "mean", "mean_of_means")
_DECISIONS = ("scenarios", "subscenarios", "examples", "prompts")
_TIMES = (datetime.date, datetime.timedelta, np.datetime64, np.timedelta64, pd.Period)
_DEFAULT_COLUMNS = ("scenario", "subscenario", "prompt")  # item columns read where a ResponseMatrix has them
_OBJECTIVES = ("kendall", "weighted_tau", "best_model", "model_quality")
_TIES = ("strict", "half")
# Resample in chunks so that the per-chunk item-count matrix stays around this many cells.
_CHUNK_CELLS = 4_000_000


def _check_sizes(sizes: Any, name: str, *, maximum: int | None = None, allow_none: bool = False) -> list:
    """A non-empty sequence of positive integers (``None`` entries kept when ``allow_none``), each ≤ ``maximum``."""
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise ValueError(f"{name}: expected a non-empty list of positive integers, got {sizes!r}")
    out = []
    for v in sizes:
        if v is None and allow_none:
            out.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
                v = int(v)
            else:
                raise ValueError(f"{name}: expected positive integers, got {_plain(v)!r}")
        if v < 1 or (maximum is not None and v > maximum):
            rng = ">= 1" if maximum is None else f"in [1, {maximum}]"
            raise ValueError(f"{name}: expected integers {rng}, got {v}")
        out.append(int(v))
    if not out:
        raise ValueError(f"{name}: expected a non-empty list of positive integers, got an empty one")
    return out


# a leaderboard table, not per-example columns: beyond this many columns a table is not searched for aggregates
_MAX_AGGREGATE_SEARCH = 200
_AGGREGATE_KINDS = {"mwr": "Mean Win Rate", "mean": "mean", "weighted": "weighted mean"}


def _without_aggregates(num: pd.DataFrame, name: str) -> pd.DataFrame:
    """A models × scenarios table without its published aggregates (a column that is the mean, weighted mean or
    Mean Win Rate of the others, as :func:`effstats.reliability.audit` and the score-table readers recognise it),
    left out with a warning naming them: scored as a scenario, it would count the aggregate in itself."""
    if not 3 <= num.shape[1] <= _MAX_AGGREGATE_SEARCH:
        return num
    from .._published import _detect_published

    # as floats, NaN where not evaluated (pandas' nullable dtypes hold NA)
    x = pd.DataFrame(num.to_numpy(dtype=float, na_value=np.nan), index=num.index, columns=num.columns)
    found: list[dict] = []
    for _ in range(3):  # the best match removed, the rest searched again (a table may carry two)
        rest = x.drop(columns=[f["column"] for f in found])
        # a column equal to another is the mean of any columns equal to it: no evidence of an aggregate
        hit = [f for f in _detect_published(rest) if not any(
            rest[f["column"]].equals(rest[c]) for c in rest.columns if c != f["column"])]
        if not hit:
            break
        found.append(hit[0])
    if not found:
        return num
    what = "; ".join(f"{_plain(str(f['column']))!r}, the {_AGGREGATE_KINDS.get(f['kind'], f['kind'])} of the other "
                     "columns" for f in found)
    cols = [f["column"] for f in found]
    warnings.warn(f"{name}: left out {what} (a published aggregate, not a scenario); pass the scenario columns "
                  f"only (e.g. table.drop(columns={[_plain(c) for c in cols]!r})) to silence this", UserWarning,
                  stacklevel=_caller_stacklevel())
    return num.drop(columns=cols)


def _negated_columns(data: Any) -> list:
    """The columns of a DataFrame that a score-table reader negated, so that higher is better in every column
    (``data.attrs["lower_is_better"]``: a HELM table's lower-is-better columns, a CSV's marked ↓ or named like an
    error), among its columns; none for any other input. Their values are negative as read: the aggregates rank
    models on them as on the other columns, but a mean over the columns subtracts them."""
    if not isinstance(data, pd.DataFrame):
        return []
    lower = data.attrs.get("lower_is_better") or ()
    if isinstance(lower, (str, bytes)) or not np.iterable(lower):
        return []
    named = {str(c) for c in lower}
    return [c for c in data.columns if str(c) in named]


def _warn_negated_means(data: Any, name: str) -> None:
    """Warn where a mean over the columns of ``data`` averages columns negated as read (:func:`_negated_columns`)."""
    lower = [_plain(c) for c in _negated_columns(data)]
    if lower:
        warnings.warn(f"{name}: column(s) {', '.join(map(repr, lower))} are lower-is-better, negated as read "
                      f"({name}.attrs['lower_is_better']): the means subtract them, which ranks the models as "
                      "higher-is-better scores but is no score on the columns' scale; leave them out (e.g. "
                      f"{name}.drop(columns={lower!r})) for a mean of the other columns", UserWarning,
                      stacklevel=_caller_stacklevel())


def no_scenario_column(data: Any, scenario: Any = "scenario") -> str:
    """Why ``data`` is read as a models × scenarios table although it may hold per-example scores: "" unless it is
    a ResponseMatrix whose items name no ``scenario`` column (nor ``task``, read in its place under the default
    name), each of its items then being a scenario. A bundled leaderboard (one item per scenario) names its
    scenarios; per-example results built with ``ResponseMatrix.from_long`` without ``groups`` do not."""
    if not isinstance(data, ResponseMatrix) or not isinstance(scenario, str):
        return ""
    columns = {str(c) for c in data.items.columns}
    if scenario in columns or (scenario == "scenario" and "task" in columns):
        return ""
    return (f"this ResponseMatrix's items carry no {scenario!r} column, so each of its {data.shape[1]} items is read "
            f"as a scenario; give per-example scores their scenario (ResponseMatrix.from_long(df, "
            f"groups={scenario!r}))")


def _long_layout(data: pd.DataFrame, name: str) -> None:
    """Refuse a long table (a row per model and example) given where a models × scenarios table or a
    ResponseMatrix is read: its text columns would be called non-numeric scores."""
    if {"model", "item", "score"} <= {str(c) for c in data.columns}:
        raise ValueError(f"{name}: a long table (columns model, item, score), one row per model and example: build "
                         "its matrix first, ResponseMatrix.from_long(df, groups='scenario') with the scenario in a "
                         "'scenario' column")


def _choice(x: Any, name: str, options: Sequence[str]) -> str:
    if x not in options:
        raise ValueError(f"{name}: expected one of {list(options)}, got {_plain(x)!r}")
    return x


# =============================================================================================
# Benchmark: the validated models × items table with its scenario / subscenario hierarchy
# =============================================================================================
@dataclass(frozen=True, eq=False)
class Benchmark(ReadOnlyFields):
    """A validated score table with its item hierarchy (built by :meth:`effstats.reliability.Benchmark.from_data`).

    Every function of :mod:`effstats.reliability` reads its input into one of these; pass a Benchmark
    directly to skip the validation when calling several of them on the same data. Its arrays are read-only (it
    keeps sums computed from them).

    Attributes
    ----------
    values : ndarray of float of shape (n_models, n_items)
        Scores, 0 at missing cells.
    observed : ndarray of bool of shape (n_models, n_items)
        Whether each cell was evaluated.
    sub_of_item : ndarray of int of shape (n_items,)
        Subscenario code of each item.
    scen_of_sub : ndarray of int of shape (n_sub,)
        Scenario code of each subscenario.
    prompt_of_item : ndarray of int of shape (n_items,) or None
        Prompt code of each item (None without a prompt column).
    model_ids : pandas.Index of shape (n_models,)
        Model names.
    scenario_names, subscenario_names : pandas.Index
        Names of the scenarios and subscenarios.
    item_ids : pandas.Index
        Item names.
    item_weight : ndarray of shape (n_items,) or None
        Weight of each item in the sums of :meth:`sub_sums` (None: 1 each): the ``"mean"`` score is then the
        weighted mean, a published weighted aggregate (MTEB's average), while a subscenario's mean, whose items
        share one weight, is unchanged, and so are the Mean Win Rate and the mean of means.

    See Also
    --------
    effstats.ResponseMatrix : The data model it is built from.
    effstats.reliability.comparison_components : The comparison graph of a plain table.

    References
    ----------
    .. [1] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), App. A (scenarios, subscenarios, missing cells).

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.reliability import Benchmark
    >>> rm = simulate_responses(4, 6, rng=0)
    >>> rm = rm.with_metadata(items=rm.items.assign(scenario=["a", "a", "a", "b", "b", "c"]))
    >>> bench = Benchmark.from_data(rm)
    >>> bench.n_models, bench.n_items, bench.n_scen, bench.is_table
    (4, 6, 3, False)
    >>> bench.group_sizes().tolist()
    [3, 2, 1]
    """

    values: np.ndarray
    observed: np.ndarray
    sub_of_item: np.ndarray
    scen_of_sub: np.ndarray
    prompt_of_item: np.ndarray | None
    model_ids: pd.Index
    scenario_names: pd.Index
    subscenario_names: pd.Index
    item_ids: pd.Index = field(default=None)  # type: ignore[assignment]
    item_weight: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        read_only_fields(self)  # masked and the subscenario sums are kept: they hold for these numbers only

    @property
    def n_models(self) -> int:
        """Number of models."""
        return self.values.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items (columns of a table)."""
        return self.values.shape[1]

    @property
    def n_sub(self) -> int:
        """Number of subscenarios (a scenario without subscenarios counts as one)."""
        return len(self.scen_of_sub)

    @property
    def n_scen(self) -> int:
        """Number of scenarios."""
        return len(self.scenario_names)

    @property
    def n_prompts(self) -> int:
        """Number of prompt variants (0 without a prompt column)."""
        return 0 if self.prompt_of_item is None else int(self.prompt_of_item.max()) + 1

    @property
    def is_table(self) -> bool:
        """True when every subscenario holds a single item (a leaderboard, not per-example data)."""
        return self.n_sub == self.n_items

    @classmethod
    def from_data(
        cls,
        data: Any,
        *,
        scenario: str | None = "scenario",
        subscenario: str | None = "subscenario",
        prompt: str | None = "prompt",
        groups: Any = None,
        name: str = "data",
    ) -> "Benchmark":
        """Build from a :class:`effstats.ResponseMatrix`, a wide DataFrame (models × scenarios) or a 2-D array.

        Parameters
        ----------
        data : ResponseMatrix, DataFrame or array of shape (n_models, n_items)
            Scores; NaN (arrays / DataFrames) or ``'-'`` (DataFrames) or the ResponseMatrix
            ``missing`` mask mark cells that were not evaluated. Scores may be any real numbers. A DataFrame's
            column that is a published aggregate of the others (their mean, weighted mean or Mean Win Rate, as
            HELM's "Mean win rate" column, recognised as :func:`effstats.reliability.audit` recognises it) is left
            out with a UserWarning naming it: scored as a scenario it would count the aggregate in itself. A
            DataFrame from a score-table reader holds its lower-is-better columns negated (listed in its
            ``attrs["lower_is_better"]``): higher is better in every column, as every aggregate ranks them.
        scenario, subscenario, prompt : str or None
            Item-metadata columns of a ResponseMatrix giving the hierarchy. Without a ``scenario`` column (the
            default name) an item column ``task`` is the scenario, as the harness and HELM readers name an item's
            task (run spec); without either every item is its own scenario (a leaderboard table). A name other
            than the defaults must be a column of the items.
        groups : array of shape (n_items,), optional
            Scenario label of each column for arrays / DataFrames whose columns are subscenarios.
        name : str, default="data"
            Argument name used in error messages.

        Returns
        -------
        effstats.reliability.Benchmark
            ``data`` itself when it already is one.

        Raises
        ------
        ValueError
            Bad input, naming the argument.

        See Also
        --------
        effstats.ResponseMatrix : Per-example data with item metadata.

        Examples
        --------
        >>> import pandas as pd
        >>> from effstats.reliability import Benchmark
        >>> t = pd.DataFrame({"A": [0.9, 0.4], "B": ["-", 0.5]}, index=["x", "y"])
        >>> bench = Benchmark.from_data(t)
        >>> bench.is_table, bench.observed.tolist()
        (True, [[True, False], [True, True]])
        """
        if isinstance(data, Benchmark):
            return data
        items = None
        if isinstance(data, ResponseMatrix):
            vals = data.values.astype(float)
            obs = data.observed
            mids, iids = data.model_ids, data.item_ids
            items = data.items
            if scenario == "scenario" and "scenario" not in items.columns and "task" in items.columns:
                scenario = "task"  # what read_results and read_helm_runs name an item's task (a HELM run spec)
            for arg, col in (("scenario", scenario), ("subscenario", subscenario), ("prompt", prompt)):
                if isinstance(col, str) and col not in _DEFAULT_COLUMNS and col not in items.columns:
                    raise ValueError(f"{arg}: {col!r} is not an item column of {name} (its columns: "
                                     f"{list(map(str, items.columns))[:10]})")
        elif isinstance(data, pd.DataFrame):
            if any(getattr(t, "kind", "O") == "c" for t in data.dtypes):  # pandas' own dtypes (Float64) have a kind
                raise InputTypeError(f"{name}: complex scores are not supported; give real numbers")
            for col, t in data.dtypes.items():  # they cast to numbers silently (nanoseconds, since 1970)
                if getattr(t, "kind", "O") in "mM" or isinstance(t, pd.PeriodDtype) or (
                        t == object and data[col].map(lambda v: isinstance(v, _TIMES)).any()):
                    raise ValueError(f"{name}: column {_plain(col)!r} holds dates or durations ({t}), not scores; "
                                     "drop it first")
            if data.empty:
                raise ValueError(f"{name}: expected a non-empty table")
            _long_layout(data, name)
            if data.index.has_duplicates:
                dup = data.index[data.index.duplicated()].unique()[:5].tolist()
                raise ValueError(f"{name}: duplicated model rows {dup}")
            if data.columns.has_duplicates:  # two columns named alike would be scored as two scenarios silently
                dup = data.columns[data.columns.duplicated()].unique()[:5].tolist()
                raise ValueError(f"{name}: duplicated column names {dup}; rename them (one column per scenario)")
            # '-' marks "not evaluated"; no DataFrame.replace (its object downcasting is deprecated in pandas 2.2)
            from ..datasets._cells import as_numbers  # its text columns parsed at once

            num = as_numbers(data)
            bad = num.isna() & data.notna()
            if bad.to_numpy().any():  # the cells written '-' aside: text only where a cell is not a number
                bad &= data.astype(str).apply(lambda c: c.str.strip()) != "-"
            if bad.any().any():
                col = bad.any().idxmax()
                # a frame straight from pd.read_csv: its model names are a column, not the index
                names = (isinstance(data.index, pd.RangeIndex) and bad[col].all() and not data[col].duplicated().any()
                         and not bad.drop(columns=col).any().any())
                hint = f"; to read it as the model names: table.set_index({_plain(col)!r})" if names else ""
                raise ValueError(f"{name}: column {col!r} has non-numeric values, e.g. "
                                 f"{_plain(data.loc[bad[col], col].iloc[0])!r}{hint}")
            if groups is None:
                num = _without_aggregates(num, name)
            arr = check_array(num.to_numpy(dtype=float, na_value=np.nan), name, ndim=2, allow_nan=True)
            obs = ~np.isnan(arr)
            vals = np.where(obs, arr, 0.0)
            mids, iids = pd.Index(data.index, name="model"), pd.Index(num.columns, name="item")
        else:
            arr = check_array(data, name, ndim=2, allow_nan=True)
            obs = ~np.isnan(arr)
            vals = np.where(obs, arr, 0.0)
            mids = pd.Index([f"m{i}" for i in range(arr.shape[0])], name="model")
            iids = pd.Index([f"s{j}" for j in range(arr.shape[1])], name="item")
        n_models, n_items = vals.shape
        if n_models < 2:
            raise ValueError(f"{name}: expected at least 2 models, got {n_models}")
        if n_items < 2:
            raise ValueError(f"{name}: expected at least 2 scenarios / items, got {n_items}")
        # every aggregate sums a model's scores (a resample repeats some): a finite score whose sum overflows would
        # rank as inf, silently
        limit = np.finfo(float).max / n_items
        huge = obs & ~(np.abs(vals) <= limit)
        if huge.any():
            i, j = np.argwhere(huge)[0]
            raise ValueError(f"{name}: score {vals[i, j]:.3g} in column {_plain(iids[j])!r} (model "
                             f"{_plain(mids[i])!r}) is too large to aggregate: a sum of {n_items} such scores "
                             f"overflows (|score| must stay below {limit:.3g}); rescale or leave out the column")
        if (~obs).all(axis=1).any():
            bad = mids[(~obs).all(axis=1)][:5].tolist()
            raise ValueError(f"{name}: models {bad} have no evaluated score; drop them first")
        if (~obs).all(axis=0).any():
            bad = iids[(~obs).all(axis=0)][:5].tolist()
            raise ValueError(f"{name}: columns {bad} were evaluated by no model; drop them first")
        has = lambda c: items is not None and c is not None and c in items.columns  # noqa: E731
        if groups is not None:
            g = np.asarray(groups)
            if g.shape != (n_items,):
                raise ValueError(f"groups: expected {n_items} scenario labels (one per column), got shape {g.shape}")
            scen_item = pd.Series(g)
            sub_item = pd.Series(np.arange(n_items))
        elif has(scenario):
            scen_item = items[scenario].reset_index(drop=True)
            sub_item = (items[subscenario] if has(subscenario) else items[scenario]).reset_index(drop=True)
        else:
            scen_item = pd.Series(np.asarray(iids))
            sub_item = pd.Series(np.arange(n_items))
        if scen_item.isna().any():
            raise ValueError("groups: some columns have no scenario label (NaN)" if groups is not None
                             else "scenario: some items have no scenario label")
        scen_codes, scen_names = pd.factorize(scen_item, sort=True)
        # A subscenario is identified by (scenario, subscenario) so equal names in two scenarios stay apart.
        pair = pd.MultiIndex.from_arrays([scen_codes, sub_item.to_numpy()])
        sub_codes, sub_uniq = pd.factorize(pair, sort=True)
        scen_of_sub = np.asarray(sub_uniq.get_level_values(0), dtype=np.intp)
        # in the order of the subscenario codes (the columns of sub_sums): a plain table's columns sort by name
        sub_names = pd.Index([f"{scen_names[s]}/{v}" for s, v in sub_uniq] if groups is not None or has(scenario)
                             else [iids[v] for _, v in sub_uniq], name="subscenario")
        prompt_codes = None
        if has(prompt):
            prompt_codes = pd.factorize(items[prompt], sort=True)[0].astype(np.intp)
        for a in (vals, obs):
            a.flags.writeable = False  # fresh arrays: read-only without a copy
        return cls(
            values=vals,
            observed=obs,
            sub_of_item=sub_codes.astype(np.intp),
            scen_of_sub=scen_of_sub,
            prompt_of_item=prompt_codes,
            model_ids=mids,
            scenario_names=pd.Index(scen_names, name="scenario"),
            subscenario_names=sub_names,
            item_ids=iids,
        )

    def subset_models(self, keep: np.ndarray) -> "Benchmark":
        """The benchmark restricted to some models.

        Parameters
        ----------
        keep : array-like of int or bool
            Model positions or a boolean mask of length ``n_models``.

        Returns
        -------
        effstats.reliability.Benchmark

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.reliability import Benchmark
        >>> bench = Benchmark.from_data(np.arange(24.0).reshape(4, 6), groups=list("aaabbc"))
        >>> bench.subset_models([0, 2]).n_models
        2
        """
        k = np.asarray(keep)
        if k.ndim != 1 or k.size == 0:
            raise ValueError(f"keep: expected a 1-D mask or list of model positions, got shape {k.shape}")
        if k.dtype == bool:
            if k.shape != (self.n_models,):
                raise ValueError(f"keep: boolean mask must have length {self.n_models}, got {k.size}")
        elif not np.issubdtype(k.dtype, np.integer):
            raise ValueError(f"keep: expected integer positions or a boolean mask, got dtype {k.dtype}")
        elif k.min() < -self.n_models or k.max() >= self.n_models:
            raise ValueError(f"keep: positions out of range for {self.n_models} models")
        values, observed = self.values[k], self.observed[k]
        for a in (values, observed):
            a.flags.writeable = False  # fresh copies (fancy indexing)
        return Benchmark(values, observed, self.sub_of_item, self.scen_of_sub, self.prompt_of_item,
                         self.model_ids[k], self.scenario_names, self.subscenario_names, self.item_ids,
                         self.item_weight)

    def items_of_sub(self) -> list[np.ndarray]:
        """Item positions of every subscenario.

        Returns
        -------
        list of ndarray of int
            One array per subscenario, in subscenario order.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.reliability import Benchmark
        >>> bench = Benchmark.from_data(np.arange(24.0).reshape(4, 6), groups=list("aaabbc"))
        >>> [items.tolist() for items in bench.items_of_sub()][:3]
        [[0], [1], [2]]
        """
        order = np.argsort(self.sub_of_item, kind="stable")
        bounds = np.searchsorted(self.sub_of_item[order], np.arange(self.n_sub + 1))
        return [order[bounds[k]:bounds[k + 1]] for k in range(self.n_sub)]

    def group_sizes(self) -> np.ndarray:
        """Number of items per subscenario.

        Returns
        -------
        ndarray of int of shape (n_sub,)

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.reliability import Benchmark
        >>> bench = Benchmark.from_data(np.arange(24.0).reshape(4, 6), groups=list("aaabbc"))
        >>> bench.group_sizes().tolist()
        [1, 1, 1, 1, 1, 1]
        """
        return np.bincount(self.sub_of_item, minlength=self.n_sub)

    @cached_property
    def masked(self) -> tuple[np.ndarray, np.ndarray]:
        """(values · observed, observed as float), both (n_models, n_items), times ``item_weight`` when given:
        computed once per benchmark."""
        if self.item_weight is None:
            out = self.values * self.observed, self.observed.astype(float)
        else:
            w = np.asarray(self.item_weight, float)[None, :]
            out = self.values * self.observed * w, self.observed * w
        for a in out:
            a.flags.writeable = False  # kept for every later call
        return out

    @cached_property
    def _full_sums(self) -> tuple[np.ndarray, np.ndarray]:
        V, O = self.masked
        order = np.argsort(self.sub_of_item, kind="stable")
        starts = np.searchsorted(self.sub_of_item[order], np.arange(self.n_sub))
        out = np.add.reduceat(V[:, order], starts, axis=1)[None], np.add.reduceat(O[:, order], starts, axis=1)[None]
        for a in out:
            a.flags.writeable = False  # kept for every later call
        return out

    def scenario_observed(self) -> np.ndarray:
        """Whether each model has at least one evaluated item in each scenario.

        Returns
        -------
        ndarray of bool of shape (n_models, n_scen)

        See Also
        --------
        effstats.reliability.Benchmark.components : The comparison graph built from it.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.reliability import Benchmark
        >>> bench = Benchmark.from_data(np.arange(24.0).reshape(4, 6), groups=list("aaabbc"))
        >>> bench.scenario_observed().shape
        (4, 3)
        """
        scen_of_item = self.scen_of_sub[self.sub_of_item]
        onehot = np.zeros((self.n_items, self.n_scen))
        onehot[np.arange(self.n_items), scen_of_item] = 1.0
        return (self.observed.astype(float) @ onehot) > 0

    def components(self) -> np.ndarray:
        """Connected component of each model in the comparison graph.

        Models are linked when they share an evaluated scenario; 0 is the largest component.

        Returns
        -------
        ndarray of int of shape (n_models,)

        See Also
        --------
        effstats.reliability.comparison_components : The same for a plain table.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.reliability import Benchmark
        >>> bench = Benchmark.from_data(np.arange(24.0).reshape(4, 6), groups=list("aaabbc"))
        >>> bench.components().tolist()
        [0, 0, 0, 0]
        """
        return _components(self.scenario_observed())

    def check_connected(self, name: str = "data") -> None:
        """Refuse models that share no scenario, directly or through others.

        Their scores (win rates, means over different scenarios) cannot be ranked against each other.

        Parameters
        ----------
        name : str, default="data"
            Argument name used in the error message.

        Raises
        ------
        ValueError
            Naming the groups of models, when there is more than one.

        See Also
        --------
        effstats.reliability.Benchmark.components : The groups.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from effstats.reliability import Benchmark
        >>> t = pd.DataFrame({"A": [0.9, np.nan], "B": [np.nan, 0.5]}, index=["x", "y"])
        >>> Benchmark.from_data(t).check_connected("table")
        Traceback (most recent call last):
        ...
        ValueError: table: the models form 2 groups that share no scenario ...
        """
        _raise_if_disconnected(self.components(), self.model_ids, name)

    # --------------------------------------------------------------- sums per subscenario
    def sub_sums(self, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Weighted score sums and observation counts per subscenario.

        Parameters
        ----------
        counts : ndarray of shape (B, n_items), optional
            Item multiplicities of B resamples; None counts every item once (B = 1).

        Returns
        -------
        num, den : ndarray of shape (B, n_models, n_sub)
            Sums of the scores and of the observation weights; ``num / den`` is each subscenario's mean.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.reliability import Benchmark
        >>> bench = Benchmark.from_data(np.arange(24.0).reshape(4, 6), groups=list("aaabbc"))
        >>> num, den = bench.sub_sums()
        >>> num.shape, bench.scen_of_sub.tolist()
        ((1, 4, 6), [0, 0, 0, 1, 1, 2])
        """
        if counts is None:  # contiguous sums per subscenario, cached (no dense items × subscenarios one-hot)
            num, den = self._full_sums
            return num.copy(), den.copy()
        V, O = self.masked
        counts = check_array(counts, "counts", ndim=2, shape=(None, self.n_items))
        if counts.min(initial=0.0) < 0:
            raise ValueError("counts: item multiplicities must be >= 0")
        B = counts.shape[0]
        num = np.empty((B, self.n_models, self.n_sub))
        den = np.empty_like(num)
        # One BLAS product per subscenario: (B, n_k) @ (n_k, M).
        for k, idx in enumerate(self.items_of_sub()):
            c = counts[:, idx]
            num[:, :, k] = c @ V[:, idx].T
            den[:, :, k] = c @ O[:, idx].T
        return num, den


#: Rounds of label propagation :func:`_components` takes before it searches the graph with scipy.
_COMPONENT_ROUNDS = 16


def _components(scen_obs: np.ndarray) -> np.ndarray:
    """Connected components of the bipartite model–scenario graph, labelled by decreasing size (equal sizes in the
    order of their first model)."""
    obs = np.asarray(scen_obs, bool)
    M, S = obs.shape
    # each model takes the smallest model index it reaches through a scenario, one scenario hop a round: a few
    # rounds on a leaderboard's (n_models, n_scenarios) table, without importing scipy.sparse (0.1 s)
    lab = np.arange(M)
    for _ in range(_COMPONENT_ROUNDS):
        scen = np.where(obs, lab[:, None], M).min(0, initial=M)
        new = np.minimum(lab, np.where(obs, scen, M).min(1, initial=M))
        if np.array_equal(new, lab):
            break
        lab = new
    else:  # long chains of scenarios: the graph search
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        r, c = np.nonzero(obs)
        g = coo_matrix((np.ones(r.size), (r, M + c)), shape=(M + S, M + S))
        lab = connected_components(g, directed=False)[1][:M]  # labels in the order of the components' first node
    uniq, inv, cnt = np.unique(lab, return_inverse=True, return_counts=True)
    rank = np.empty(len(uniq), np.intp)
    rank[np.argsort(-cnt, kind="stable")] = np.arange(len(uniq))
    return rank[inv]


def _raise_if_disconnected(comp: np.ndarray, model_ids: pd.Index | None, name: str) -> None:
    k = int(comp.max()) + 1 if comp.size else 1
    if k <= 1:
        return
    ids = model_ids if model_ids is not None else pd.Index([f"model {i}" for i in range(comp.size)])
    parts = []
    for c in range(min(k, 4)):
        members = ids[comp == c].tolist()
        parts.append(f"group {c + 1}: {len(members)} model(s) e.g. {_plain(members[:3])}")
    raise ValueError(
        f"{name}: the models form {k} groups that share no scenario ({'; '.join(parts)}{'; ...' if k > 4 else ''}), "
        "so their scores cannot be ranked against each other; rank each group separately "
        "(effstats.reliability.comparison_components gives the groups) or keep only shared scenarios")
