"""A benchmark's bootstrap resamples, by decision (scenarios, subscenarios, prompts or examples): their index arrays
(:func:`_draw`), the score sums they give (:func:`_counts`), in chunks that bound the memory of a batch
(:func:`_resample_counts`), and the models' scores on them (:func:`_resampled_scores`); shared by DIoR, the
efficiency curves and Flash-HELM."""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ._benchmark import _CHUNK_CELLS, Benchmark
from ._winrate import _scenario_table, _score, _score_from_scenarios


def _multiplicity(idx: np.ndarray, n: int) -> np.ndarray:
    """(B, k) draws of 0..n-1 → (B, n) counts, by one offset bincount."""
    B = idx.shape[0]
    return np.bincount((idx + n * np.arange(B)[:, None]).ravel(), minlength=B * n).reshape(B, n).astype(float)


def _example_sizes(bench: Benchmark, size: int | None) -> list[int]:
    """Examples drawn per subscenario: ``size`` capped at what each subscenario holds (a smaller subscenario
    is used whole, as in the full benchmark), so no instantiation holds more examples than the data."""
    return [int(g) if size is None else min(int(size), int(g)) for g in bench.group_sizes()]


def _check_example_size(bench: Benchmark, size: int | None, name: str = "size") -> None:
    if size is not None and size > int(bench.group_sizes().max()):
        raise ValueError(f"{name}: {size} examples per subscenario requested but the largest subscenario holds "
                         f"{int(bench.group_sizes().max())}; drawing more examples than exist would make a subset look "
                         "more reliable than the full benchmark")


def _draw(bench: Benchmark, decision: str, size: int | None, B: int, rng: np.random.Generator,
          replace: bool = True) -> list[np.ndarray]:
    """Index arrays of B resamples: one (B, k) array of drawn scenario / subscenario / prompt codes, or for
    ``examples`` one (B, k_g) array of item positions (within the subscenario) per subscenario."""
    if decision in ("scenarios", "subscenarios", "prompts"):
        n = {"scenarios": bench.n_scen, "subscenarios": bench.n_sub, "prompts": bench.n_prompts}[decision]
        return [rng.integers(0, n, size=(B, size or n))]
    out = []
    for n_g, k in zip(bench.group_sizes(), _example_sizes(bench, size)):
        if replace:
            out.append(rng.integers(0, n_g, size=(B, k)))
        elif k >= n_g:  # the whole subscenario, in random order
            out.append(np.argsort(rng.random((B, n_g)), axis=1))
        else:  # k of n_g without replacement: the k smallest of n_g uniform keys (linear-time partition)
            out.append(np.argpartition(rng.random((B, n_g)), k - 1, axis=1)[:, :k])
    return out


def _counts(bench: Benchmark, decision: str, indices: Sequence[np.ndarray]):
    """(num, den, sub_w, scen_w) of a batch of resamples given by their index arrays."""
    if decision == "scenarios":
        num, den = bench.sub_sums()
        return num, den, None, _multiplicity(indices[0], bench.n_scen)
    if decision == "subscenarios":
        num, den = bench.sub_sums()
        return num, den, _multiplicity(indices[0], bench.n_sub), None
    if decision == "prompts":
        pw = _multiplicity(indices[0], bench.n_prompts)
        return (*bench.sub_sums(pw[:, bench.prompt_of_item]), None, None)
    groups = bench.items_of_sub()
    B = indices[0].shape[0]
    V, O = bench.masked
    complete = bool(bench.observed.all())
    num = np.empty((B, bench.n_models, bench.n_sub))
    den = np.empty_like(num)
    for j, (g, pick) in enumerate(zip(groups, indices)):
        k = pick.shape[1]
        if 4 * k <= len(g):  # few draws: gather the drawn items, cost M·B·k
            items = g[pick]
            num[:, :, j] = V[:, items].sum(-1).T
            den[:, :, j] = k if complete else O[:, items].sum(-1).T
        else:  # many draws: multiplicities (B, n_g) times the values, one BLAS product
            c = _multiplicity(pick, len(g))
            num[:, :, j] = c @ V[:, g].T
            den[:, :, j] = c.sum(1)[:, None] if complete else c @ O[:, g].T
    return num, den, None, None


def _chunk_size(bench: Benchmark, decision: str, size: int | None) -> int:
    if decision != "examples":
        return 1 << 30
    per_boot = max(sum(max(k, g // 4) for k, g in zip(_example_sizes(bench, size), bench.group_sizes())), 1)
    return max(1, _CHUNK_CELLS // (per_boot * (1 if bench.n_models < 64 else 2)))


def _resample_counts(bench: Benchmark, decision: str, size: int | None, n_boot: int, rng: np.random.Generator,
                     replace: bool = True) -> Iterator[tuple]:
    """Yield (num, den, sub_w, scen_w, B) chunks of resampled benchmarks for a decision."""
    step = _chunk_size(bench, decision, size)
    for a in range(0, n_boot, step):
        B = min(step, n_boot - a)
        yield (*_counts(bench, decision, _draw(bench, decision, size, B, rng, replace)), B)


def _compute_fraction(bench: Benchmark, decision: str, size: int | None) -> float:
    if size is None:
        return 1.0
    if decision == "scenarios":
        return size / bench.n_scen
    if decision == "subscenarios":
        return size / bench.n_sub
    if decision == "prompts":
        return size / bench.n_prompts
    return float(np.minimum(bench.group_sizes(), size).sum() / bench.n_items) if decision == "examples" else 1.0


def _scores_from_counts(bench: Benchmark, counts: tuple, score: str, ties: str,
                        masks: Sequence[np.ndarray | None] = (None,)) -> list[np.ndarray]:
    num, den, sw, cw = counts[:4]
    if score == "mean" or len(masks) == 1:
        return [_score(bench, num, den, score, ties, sw, cw, m) for m in masks]
    # a model's scenario scores do not depend on who else competes: one table serves every mask
    scen = _scenario_table(num, den, bench.scen_of_sub, bench.n_scen, sw)
    return [_score_from_scenarios(scen if m is None else scen[:, m], score, ties, cw) for m in masks]


def _resampled_scores(bench: Benchmark, decision: str, size: int | None, n_boot: int, rng, score: str, ties: str,
                      masks: Sequence[np.ndarray | None] = (None,), replace: bool = True) -> list[np.ndarray]:
    """Scores (n_boot, n_kept_models) under resampling, one array per model mask (same draws)."""
    outs: list[list[np.ndarray]] = [[] for _ in masks]
    for chunk in _resample_counts(bench, decision, size, n_boot, rng, replace):
        for o, s in zip(outs, _scores_from_counts(bench, chunk, score, ties, masks)):
            o.append(s)
    return [np.concatenate(o, axis=0) for o in outs]
