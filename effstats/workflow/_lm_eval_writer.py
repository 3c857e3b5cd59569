"""Write per-item 0/1 results in lm-evaluation-harness's ``--log_samples`` layout (fixtures, demonstrations)."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..responses import ResponseMatrix

__all__ = ["write_lm_eval_samples"]


_MAX_NAME = 120  # characters of a model or task name in a file name (file names hold at most 255 bytes)


def _sanitize(name: str, unsafe: str = r"[^\w.\-]") -> str:
    """``name`` as one file-name component that stays inside its folder.

    lm-eval writes "org/name" as the folder "org__name" and replaces the characters ``unsafe`` matches; a name of
    dots only ("..") or starting with one gets a leading "_" (never the parent folder, never hidden), and a long name
    is cut and ends with a hash of the whole name (names that differ stay apart).
    """
    out = re.sub(unsafe, "_", str(name).replace("/", "__"), flags=re.ASCII)
    if not out or out.startswith("."):
        out = "_" + out
    if len(out) > _MAX_NAME:
        out = out[: _MAX_NAME - 17] + "-" + hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return out


# lm-eval writes a task's name into its samples file name as it is: only what would leave the folder or break the
# file name is replaced, so that names such as "rotate_+30" read back as themselves
_TASK_UNSAFE = r"[\\\x00-\x1f\x7f]"


def _distinct(names: Any, what: str, unsafe: str = r"[^\w.\-]") -> dict[str, str]:
    """Each name's file-name form, refusing two names that would share one."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for n in map(str, names):
        f = _sanitize(n, unsafe)
        if f in seen and seen[f] != n:
            raise ValueError(f"responses: the {what}s {seen[f]!r} and {n!r} would be written to one file name "
                             f"{f!r}; rename one")
        seen[f] = n
        out[n] = f
    return out


def _check_documents(rm: ResponseMatrix, info: pd.DataFrame) -> None:
    """Refuse items that would be written as one document (``arc/01`` and ``arc/1``: doc_id 1 twice, a log its own
    reader refuses) or read back as another id (``arc/01`` as ``arc/1``)."""
    from .._shared import _plain

    ids = rm.item_ids
    key = pd.MultiIndex.from_arrays([info["task"].astype(str).to_numpy(), info["doc_id"].to_numpy()])
    dup = key.duplicated(keep=False)
    if dup.any():
        first = key[dup][0]
        a, b = ids[np.flatnonzero(key == first)[:2]]
        raise ValueError(f"responses: items {_plain(a)!r} and {_plain(b)!r} are one document of task "
                         f"{first[0]!r} (doc_id {first[1]}); give each item its own doc_id")
    if "doc_id" not in rm.items.columns:
        back = info["task"].astype(str) + "/" + info["doc_id"].astype(str)
        other = np.flatnonzero(back.to_numpy() != ids.astype(str).to_numpy())
        if other.size:
            i = other[0]
            raise ValueError(f"responses: item {_plain(ids[i])!r} is written as doc_id {info['doc_id'].iloc[i]} and "
                             f"read back as {back.iloc[i]!r}; write its document index in plain digits")


def write_lm_eval_samples(responses: ResponseMatrix, directory: str | Path, *, n_choices: int = 4,
                          numbers: str = "string", timestamp: str = "2026-01-01T00-00-00.000000",
                          models: Any = None, items: Any = None, rng: Any = 0) -> Path:
    """Write 0/1 results as lm-evaluation-harness sample logs: one folder per model with
    ``samples_<task>_<timestamp>.jsonl`` per task and ``results_<timestamp>.json`` naming the model.

    Each record is a multiple-choice document with ``n_choices`` choices, gold ``doc_id % n_choices``, and
    loglikelihoods whose arg-max is the gold choice exactly where the response is 1, so the harness's ``acc`` (and
    effstats' reader, which recomputes it from the loglikelihoods) equals the response. Missing cells are not
    written (the model "did not run" that document).

    Parameters
    ----------
    responses : ResponseMatrix
        Binary; item ids ``"<task>/<doc_id>"`` (or a ``task`` and ``doc_id`` item column).
    directory : path
        The ``--output_path``. Every file is written inside it: model and task names become file names as lm-eval
        makes them (``org/name`` -> ``org__name``; in a model's folder name other characters but letters, digits,
        ``_ . -`` -> ``_``, in a task's only a backslash and control characters), a name of dots or starting with
        one gets a leading ``_``, and a name over 120 characters is cut and ends with a hash of the whole name.
        Two names that would share a file name are refused.
    n_choices : int, default=4
        Choices per document.
    numbers : {"string", "numeric"}, default="string"
        How ``resps`` / ``filtered_resps`` hold the numbers: as strings (recent harness versions) or as JSON
        numbers and booleans (older ones).
    timestamp : str, default="2026-01-01T00-00-00.000000"
        The run's timestamp in the file names.
    models, items : sequence of ids, default=None
        Write only these models / items (ids).
    rng : int or Generator, default=0
        The loglikelihoods' noise.

    Returns
    -------
    Path
        ``directory``.

    See Also
    --------
    read_results : reads the logs back (``format="lm-eval"``).
    select : writes the chosen items as the harness's ``--samples`` file.

    Examples
    --------
    >>> import tempfile
    >>> from effstats import ResponseMatrix
    >>> from effstats.datasets import read_lm_eval_samples
    >>> from effstats.workflow import write_lm_eval_samples
    >>> rm = ResponseMatrix([[1, 0, 1], [0, 0, 1]], model_ids=["org/a", "b"], item_ids=["arc/0", "arc/1", "arc/2"])
    >>> out = write_lm_eval_samples(rm, tempfile.mkdtemp())
    >>> back = read_lm_eval_samples(out)   # model names from results_<timestamp>.json, in name order
    >>> back.to_frame().loc[["org/a", "b"]].astype(int).values.tolist()
    [[1, 0, 1], [0, 0, 1]]
    """
    from .._shared import _plain
    from .._validation import check_positive_int
    from ._tasks import item_tasks
    from ._io import check_path

    if not isinstance(responses, ResponseMatrix):
        raise ValueError(f"responses: expected a ResponseMatrix, got {type(responses).__name__}")
    out = check_path(directory, "directory")
    if out.exists() and not out.is_dir():
        raise ValueError(f"directory: {str(out)!r} exists and is not a folder")
    n_choices = check_positive_int(n_choices, "n_choices", minimum=2)
    if not isinstance(timestamp, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}T[0-9\-:.]+", timestamp):
        raise ValueError(f"timestamp: expected lm-eval's form 2026-01-01T00-00-00.000000, got {timestamp!r}")
    if responses.kind != "binary":
        raise ValueError("responses: lm-eval multiple-choice logs hold 0/1 accuracy; these responses are graded")
    if not isinstance(numbers, str) or numbers not in ("string", "numeric"):
        raise ValueError(f"numbers: expected 'string' or 'numeric', got {numbers!r}")
    rm = responses if models is None and items is None else responses.subset(models=models, items=items)
    info = item_tasks(rm)
    if (info["doc_id"] < 0).any():
        bad = rm.item_ids[np.flatnonzero(info["doc_id"].to_numpy() < 0)[0]]
        raise ValueError(f"responses: item {_plain(bad)!r} names no lm-eval document: item ids must be "
                         "'<task>/<doc_id>', the doc_id a whole number below 2**53 (or the items carry task and "
                         "doc_id columns)")
    _check_documents(rm, info)
    from .._validation import check_rng

    gen = check_rng(rng, "rng")
    # task codes, not numpy text comparisons: numpy's strings drop a trailing NUL ("t\0" == "t")
    task_code, task_names = pd.factorize(info["task"].astype(str), sort=True)
    docs = info["doc_id"].to_numpy()
    vals, obs = rm.values, rm.observed
    folders = _distinct(rm.model_ids, "model")
    files = _distinct(task_names, "task", _TASK_UNSAFE)
    # each record printed as json.dumps prints its dict (the same keys, order, separators and escapes), from parts
    # fixed per task and per number of choices: json.dumps of a nested dict costs more than the draws a record needs
    args = "{" + ", ".join(f'"gen_args_{k}": {{"arg_0": "Question \x00:", "arg_1": " choice {k}"}}'
                           for k in range(n_choices)) + "}"
    args_parts = args.split("\x00")  # the document's index goes where the placeholder was
    flag = ('"False"', '"True"') if numbers == "string" else ("false", "true")
    doc_list = docs.tolist()
    for mi, model in enumerate(rm.model_ids):
        folder = out / folders[str(model)]
        folder.mkdir(parents=True, exist_ok=True)
        row = vals[mi].tolist()
        for code, task in enumerate(task_names):
            cols = np.flatnonzero((task_code == code) & obs[mi]).tolist()
            question = json.dumps(f"{task} question ")[:-1]  # escaped, without its closing quote: the index follows
            lines = []
            for j in cols:
                doc = int(doc_list[j])
                gold = doc % n_choices
                lls = gen.normal(-3.0, 0.5, n_choices).tolist()  # Python floats: their repr is json's and numpy's str
                top = gold if row[j] else (gold + 1 + int(gen.integers(n_choices - 1))) % n_choices
                lls[top] = max(lls) + 0.5 + gen.random()  # (float arithmetic: numpy's float64 sums to the bit)
                if numbers == "string":
                    pairs = [f'["{v!r}", {flag[k == top]}]' for k, v in enumerate(lls)]
                else:
                    pairs = [f"[{v!r}, {flag[k == top]}]" for k, v in enumerate(lls)]
                d = str(doc)
                resps = ", ".join(f"[{p}]" for p in pairs)
                lines.append(f'{{"doc_id": {d}, "doc": {{"question": {question}{d}", "gold": {gold}}}, '
                             f'"target": "{gold}", "arguments": {d.join(args_parts)}, "resps": [{resps}], '
                             f'"filtered_resps": [{", ".join(pairs)}], "filter": "none", "metrics": ["acc"], '
                             f'"acc": {float(row[j])!r}}}')
            if lines:
                (folder / f"samples_{files[str(task)]}_{timestamp}.jsonl").write_text("\n".join(lines) + "\n",
                                                                                  encoding="utf-8")
        (folder / f"results_{timestamp}.json").write_text(json.dumps(
            {"results": {}, "model_name": str(model), "model_name_sanitized": folders[str(model)],
             "config": {"model": "hf", "model_args": f"pretrained={model}"}}), encoding="utf-8")
    return out
