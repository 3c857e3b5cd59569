"""lm-evaluation-harness output folders: the samples files in them, each file's task, timestamp and model (its
folder, or the name in its run's results file), and the runs kept when a task was run more than once."""
from __future__ import annotations

import contextlib
import json
import lzma
import re
import warnings
import zlib
from pathlib import Path
from typing import Any, Iterator


from .._shared import RepeatedKeyError, _name_list
from .._user_files import json_loads, repeated_key_said
from ._files import (_COMPRESSED, JUPYTER_COPIES, LeftOutPathsWarning, _each_path, _find, _open, _refuse_lfs_pointer,
                     _walk, refuse_repeated_runs, warn_repeated_runs, without_jupyter_copies)

# A copy a browser or file manager made ("… (1).jsonl", "… - Copy.jsonl", "… copy.jsonl") is another run of the
# same task, not a task of its own: its suffix is kept with the timestamp, so it sorts after the original.
_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+?)(?:_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9\-:.]+))?"
                         r"(?P<copy>\s*\(\d+\)|\s*-\s*copy(?:\s*\(\d+\))?|\s+copy(?:\s+\d+)?)?\.jsonl"
                         r"(?:\.gz|\.bz2|\.xz)?\Z", re.I | re.S)  # a task name may hold any character


def _expand(p: Any, arg: str) -> list[Path]:
    def one(path: Path) -> list[Path]:
        if path.is_dir():
            # the results files too, in the same walk: a folder with one but no samples is a run without
            # --log_samples, whose model is named rather than dropped unsaid
            found = _find(path, lambda name: name.startswith("samples_") and ".jsonl" in name or is_results_name(name))
            results = [f for f in found if is_results_name(f.name)]
            found = [f for f in found if not is_results_name(f.name)]
            # only regular files are read: a FIFO would block the read forever, a folder or a symlink loop fail it
            odd = [f for f in found if not f.is_file()]
            if odd:
                warnings.warn(f"{arg}: left out {len(odd)} path(s) named like logs that are not regular files (a "
                              f"folder, a FIFO, a device or a broken link): {_name_list([_shown(f) for f in odd])}",
                              LeftOutPathsWarning, stacklevel=5)
            found = [f for f in found if f not in odd]
            # not a run (read, JupyterLab's copy of a log is a task <task>_<timestamp>-checkpoint of a model
            # named .ipynb_checkpoints)
            found = without_jupyter_copies(found, path, arg, stacklevel=5)
            files = [f for f in found if f.name.endswith(_LOG_ENDINGS)]
            other = [f for f in found if f not in files]
            if other:
                warnings.warn(f"{arg}: left out {len(other)} file(s) named like logs but neither .jsonl nor "
                              f"{', '.join('.jsonl' + e for e in _COMPRESSED)}: "
                              f"{_name_list([_shown(f) for f in other])}",
                              UserWarning, stacklevel=5)
            if not files:
                old = old_layout_hint(path)
                raise ValueError(f"{arg}: directory {str(path)!r} contains no samples_*.jsonl file"
                                 + (f"; {old}" if old else ""))
            _warn_results_without_samples(path, results, files, arg)
            return files
        if path.is_file():
            return [path]
        if path.exists() or path.is_symlink():
            raise ValueError(f"{arg}: {str(path)!r} is not a regular file or a folder (a FIFO, a device or a broken "
                             "link); give the log itself")
        raise FileNotFoundError(f"{arg}: {str(path)!r} does not exist")

    return _each_path(p, arg, one, "file or directory", "a path, a list of paths or a mapping model -> path(s)")


class ResultsWithoutSamplesWarning(UserWarning):
    """Models left out because their lm-eval output folder holds a ``results_*.json`` but no ``samples_*.jsonl``
    (a run without ``--log_samples``, which logs no per-document result); ``models`` names them."""

    def __init__(self, message: str, models: Any = ()):
        super().__init__(message)
        self.models = tuple(models)


def is_results_name(name: str) -> bool:
    """Whether a file name is an lm-eval run's results file, plain or compressed (``results_*.json[.gz|.bz2|.xz]``)."""
    return name.startswith("results_") and name.endswith(RESULTS_ENDINGS)


def _warn_results_without_samples(root: Path, results: list[Path], files: list[Path], arg: str) -> None:
    """One :class:`ResultsWithoutSamplesWarning` naming the model of each folder under ``root`` that holds a results
    file but none of the samples ``files`` (by the name in its results file, else by its folder)."""
    logged = {f.parent for f in files}
    lone: dict[Path, Path] = {}
    for r in results:
        if r.is_file() and r.parent not in logged and JUPYTER_COPIES not in r.relative_to(root).parts[:-1]:
            lone.setdefault(r.parent, r)
    if not lone:
        return
    names = []
    for r in lone.values():
        try:
            name = _name_in_results(r, arg)
        except ValueError:  # an unreadable results file still names its model by its folder
            name = None
        names.append(name if name is not None else _model_of(r))
    folders = [d.relative_to(root).as_posix() or "." for d in lone]
    warnings.warn(ResultsWithoutSamplesWarning(
        f"{arg}: left out {len(names)} model(s) whose lm-eval output holds a results_*.json but no samples_*.jsonl "
        f"(a run without --log_samples logs no per-document result): {_name_list(map(repr, names))} (folder(s) "
        f"{_name_list(folders)}); rerun lm_eval with --log_samples to include them", names), stacklevel=6)


@contextlib.contextmanager
def noting_results_without_samples() -> Iterator[list[str]]:
    """A list that gathers the models of each :class:`ResultsWithoutSamplesWarning` raised in the block, for the
    record the command writes; every warning of the block is passed on as raised (a refusal's too)."""
    lone: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield lone
        finally:
            lone += [m for w in caught if isinstance(w.message, ResultsWithoutSamplesWarning) for m in w.message.models]
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


_LOG_ENDINGS = (".jsonl",) + tuple(".jsonl" + e for e in _COMPRESSED)
# a run's results file, as lm-eval writes it or compressed beside compressed logs (``gzip -r`` of an output folder)
RESULTS_ENDINGS = (".json",) + tuple(".json" + e for e in _COMPRESSED)
# what a damaged compressed file raises on reading, besides OSError (gzip's BadGzipFile, bz2's invalid stream)
_DAMAGED = (OSError, EOFError, zlib.error, lzma.LZMAError)

# lm-eval 0.4.0 and 0.4.1 write each task's samples as one indented JSON array, to
# ``<model_args with '/' and '=' as '__'>_<task>.jsonl`` beside one results.json per output folder
OLD_SAMPLES = ("lm-evaluation-harness 0.4.0/0.4.1 sample files (<model_args>_<task>.jsonl, one JSON array per task), "
               "which are not read: rerun with lm-eval >= 0.4.2 (samples_<task>_<timestamp>.jsonl), or write each "
               "array's records one per line to <model>/samples_<task>.jsonl")


def is_json_array(f: Path) -> bool:
    """Whether the file's first character other than white space is ``[`` (a JSON array, not JSON lines), read
    decompressed where it is compressed (gzip, bzip2, xz: by its first bytes)."""
    try:
        with _open(f) as fh:
            head = fh.read(4096)
    except (*_DAMAGED, UnicodeDecodeError):
        return False
    return head.lstrip(" \t\r\n").startswith("[")


def old_layout_hint(folder: Path) -> str:
    """:data:`OLD_SAMPLES` with the first such file, where the folder holds ``.jsonl`` files (or compressed ones,
    ``.jsonl.gz``, ``.bz2``, ``.xz``) of JSON arrays; "" otherwise."""
    for f in _walk(folder, lambda name: name.endswith(_LOG_ENDINGS) and not name.startswith("samples_")):
        if f.is_file() and is_json_array(f):
            return f"it holds {OLD_SAMPLES} (e.g. {_shown(f)})"
    return ""


def _task_of(f: Path) -> tuple[str, str]:
    """(task, timestamp) of a samples file; a copy's suffix ("(1)") stays with the timestamp."""
    m = _SAMPLES_RE.match(f.name)
    if m:
        return _text(m.group("task")), (m.group("ts") or "") + (m.group("copy") or "")
    stem = f.name.split(".jsonl")[0]
    return _text(stem), ""


def _text(name: str) -> str:
    # bytes of a file name that are not UTF-8 (kept by Python as lone surrogates, which no UTF-8 file can hold) are
    # written \xNN
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _model_of(f: Path) -> str:
    # lm-eval sanitises "org/name" into the folder name "org__name"
    return _text(f.parent.name).replace("__", "/", 1)


def _shown(f: Path) -> str:
    # every model's samples files share names: the folder tells them apart
    return f"{f.parent.name}/{f.name}" if f.parent.name else f.name


def _results_file(f: Path, ts: str) -> Path | None:
    """The run's ``results_<ts>.json`` (or ``<stem>_<ts>.json``; either compressed, ``.json.gz``, ``.bz2``, ``.xz``,
    where the plain one is not there) beside a samples file of timestamp ``ts``."""
    if not ts:
        return None
    m = re.match(r"\d{4}-\d{2}-\d{2}T[0-9\-:.]+", ts)
    exact = _named(f.parent, f"results_{ts}") if m and m.group() != ts else None
    if exact is not None:
        return exact
    ts = m.group() if m else ts  # a copy's run is the original's
    if not ts:
        return None
    exact = _named(f.parent, f"results_{ts}")
    if exact is not None:
        return exact
    # the plain file first, then the compressed ones in RESULTS_ENDINGS' order
    others = sorted((RESULTS_ENDINGS.index(e), p.name, p) for p in f.parent.glob("*.json*") for e in RESULTS_ENDINGS
                    if p.name.endswith(f"_{ts}{e}") and p.is_file())
    return others[0][2] if others else None


def _named(folder: Path, stem: str) -> Path | None:
    """The regular file ``stem`` + one of :data:`RESULTS_ENDINGS` in ``folder``, the plain one first; None."""
    return next((p for p in (folder / (stem + e) for e in RESULTS_ENDINGS) if p.is_file()), None)


def _results_text(r: Path) -> str:
    """A run's results file as text, decompressed where it is compressed (by its first bytes, whatever its name),
    without a byte order mark."""
    with _open(r) as fh:
        return fh.read()


# model_args keys naming the model, in the order lm-eval tries them
_NAME_KEYS = ("pretrained", "model", "path", "engine")


def _name_in_results(r: Path, arg: str) -> str | None:
    """The model name recorded in a results file: ``model_name``, else the model in ``config.model_args``."""
    _refuse_lfs_pointer(r, _shown(r), arg)
    try:
        doc = json_loads(_results_text(r))
    except RepeatedKeyError as exc:
        raise ValueError(f"{arg}: {_shown(r)} (the results file of the run) {repeated_key_said(exc)}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        why = "nests lists or objects too deeply to read" if isinstance(exc, RecursionError) else str(exc)
        raise ValueError(
            f"{arg}: {_shown(r)} (the results file of the run) is not valid JSON ({why}); repair it, delete it to name "
            "the model by its folder, or pass a mapping model name -> path(s)"
        ) from None
    except _DAMAGED as exc:  # a damaged or truncated compressed file, or one named .gz that is not gzip
        raise ValueError(
            f"{arg}: {_shown(r)} (the results file of the run) cannot be read ({exc}); repair it, delete it to name "
            "the model by its folder, or pass a mapping model name -> path(s)"
        ) from None
    if not isinstance(doc, dict):
        return None
    name = doc.get("model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    margs = _model_args(doc)
    for key in _NAME_KEYS:
        v = margs.get(key)
        if v:
            return v
    return None


def _model_args(doc: Any) -> dict[str, str]:
    """A results file's ``config.model_args`` (``"pretrained=org/m,revision=step1000"`` or a mapping) as a mapping
    of text; {} where it logs none."""
    cfg = doc.get("config") if isinstance(doc, dict) else None
    margs = cfg.get("model_args") if isinstance(cfg, dict) else None
    if isinstance(margs, str):
        pairs = (part.partition("=") for part in margs.split(","))
        margs = {k.strip(): v.strip() for k, eq, v in pairs if eq}
    if not isinstance(margs, dict):
        return {}
    return {str(k).strip(): v.strip() if isinstance(v, str) else _plain_field(v) for k, v in margs.items()}


def _results_doc(r: Path | None, docs: dict[Path, Any], arg: str) -> Any:
    """The parsed results file ``r`` (None where there is none or it is not JSON), each file parsed once; one naming
    a key twice is refused (``json`` keeps the last value: of two n-shot counts, two model_args) naming ``arg``, the
    file, the line and the key."""
    if r is None:
        return None
    if r not in docs:
        try:
            docs[r] = json_loads(_results_text(r))
        except RepeatedKeyError as exc:
            raise ValueError(f"{arg}: {_shown(r)} (the results file of the run) {repeated_key_said(exc)}") from None
        except (ValueError, RecursionError, *_DAMAGED):
            docs[r] = None
    return docs[r]


# model_args entries that say how a model is run, not which model (or which weights) it is: hf's devices and
# memory, vllm's and sglang's parallelism and memory share, an API's concurrency
_RUN_ONLY_KEYS = frozenset({"batch_size", "max_batch_size", "device", "device_map", "device_map_option", "gpus",
                            "parallelize", "max_memory_per_gpu", "max_cpu_memory", "offload_folder",
                            "trust_remote_code", "tensor_parallel_size", "data_parallel_size",
                            "pipeline_parallel_size", "gpu_memory_utilization", "swap_space", "enforce_eager",
                            "max_num_seqs", "tp_size", "dp_size", "mem_fraction_static", "num_concurrent",
                            "max_retries", "timeout"})


def _split_checkpoints(runs: dict, arg: str, docs: dict[Path, Any]) -> dict:
    """Runs of one model name and task whose results files log other ``model_args`` -- another revision, dtype or
    adapter, i.e. another checkpoint, which lm-eval writes into the same folder -- make models of their own, named
    ``name@key=value`` by the entries that differ, in one UserWarning; runs without a results file (or without
    ``model_args`` in it) keep the name. ``runs``: ``{(model, task): [(timestamp, order, file), ...]}``."""
    ident: dict[Path, tuple | None] = {}
    by_model: dict[str, set] = {}
    collide: set[str] = set()  # models with a task run under other model_args
    for (model, _), lst in runs.items():
        mine = set()
        for ts, _, f in lst:
            margs = _model_args(_results_doc(_results_file(f, ts), docs, arg))
            ident[f] = tuple(sorted((k, v) for k, v in margs.items()
                                    if k not in _NAME_KEYS and k.lower() not in _RUN_ONLY_KEYS)) if margs else None
            if ident[f] is not None:
                mine.add(ident[f])
        by_model.setdefault(model, set()).update(mine)
        if len(mine) > 1:
            collide.add(model)
    # only where one task was run under other model_args: tasks run at other times with another setting (a longer
    # max_length for one of them) are still one model
    split = {m: sigs for m, sigs in by_model.items() if m in collide}
    if not split:
        return runs
    differ = {m: sorted(k for k in {k for sig in sigs for k, _ in sig} if len({dict(sig).get(k) for sig in sigs}) > 1)
              for m, sigs in split.items()}
    out: dict = {}
    names: dict[str, set] = {}
    for (model, task), lst in runs.items():
        for run in lst:
            name = model
            if model in split and ident[run[2]] is not None:
                got = dict(ident[run[2]])
                name = f"{model}@{','.join(f'{k}={got[k]}' for k in differ[model] if k in got)}".rstrip("@")
            names.setdefault(model, set()).add(name)
            out.setdefault((name, task), []).append(run)
    said = "; ".join(f"model {m!r} as {len(names[m])} models ({', '.join(map(repr, sorted(names[m])))}): its runs log "
                     f"other {', '.join(differ[m])}" for m in sorted(split))
    warnings.warn(f"{arg}: runs whose results files log other model_args are other checkpoints, read as models of "
                  f"their own: {said}", UserWarning, stacklevel=4)
    return out


def _limit_of(f: Path, ts: str, docs: dict[Path, Any], arg: str) -> str:
    """The ``--limit`` a run's results file logs (``config.limit``), as text; "" for none (every document)."""
    doc = _results_doc(_results_file(f, ts), docs, arg)
    cfg = doc.get("config") if isinstance(doc, dict) else None
    return _plain_field(cfg.get("limit")) if isinstance(cfg, dict) else ""


def _model_from_logs(f: Path, arg: str, seen: dict[Path, str | None]) -> str:
    """The model of a samples file: the name in its run's results file, else its folder name."""
    r = _results_file(f, _task_of(f)[1])
    if r is not None and r not in seen:  # one results file serves every task of the run
        seen[r] = _name_in_results(r, arg)
    name = seen[r] if r is not None else None
    return name if name is not None else _model_of(f)


# the run-level fields of results_<timestamp>.json compared between the reference runs and a new run: the task's
# version and its number of few-shot examples
RUN_FIELDS = ("task_version", "n_shot")


def _plain_field(v: Any) -> str:
    """A results file's version or shot count as text: 1, 1.0 and "1.0" alike; "" when not logged."""
    if v is None or isinstance(v, (dict, list)):
        return ""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{float(v):g}"
    return str(v).strip()


def _run_fields(chosen: dict[tuple[str, str], list[Path]], arg: str) -> dict[str, dict[str, str]]:
    """``{field: {task: value}}`` of :data:`RUN_FIELDS` from the runs' results files (``versions``, ``n-shot``, else
    ``configs.<task>.num_fewshot``); a task whose runs log other values gets ``"*"``, fields no run logs are left
    out. A results file that is not valid JSON is passed over (the model is then named by its folder)."""
    docs: dict[Path, Any] = {}
    out: dict[str, dict[str, str]] = {k: {} for k in RUN_FIELDS}
    for (_, task), files in chosen.items():
        for f in files:
            doc = _results_doc(_results_file(f, _task_of(f)[1]), docs, arg)
            if not isinstance(doc, dict):
                continue
            got = {k: doc.get(k) if isinstance(doc.get(k), dict) else {} for k in ("versions", "n-shot", "configs")}
            cfg = got["configs"].get(task)
            shots = got["n-shot"].get(task, cfg.get("num_fewshot") if isinstance(cfg, dict) else None)
            for field, v in zip(RUN_FIELDS, (got["versions"].get(task), shots)):
                v = _plain_field(v)
                if v and out[field].setdefault(task, v) != v:
                    out[field][task] = "*"
    return {k: v for k, v in out.items() if v}


def _choose_runs(runs: dict, duplicates: str, arg: str, docs: dict[Path, Any] | None = None,
                 left_out: dict | None = None) -> dict[tuple[str, str], list[Path]]:
    """The files read for each (model, task) under the ``duplicates`` rule; runs sort by (timestamp, order given).
    Where the run kept is a ``--limit`` run and a run left out is not, the warning says so; the files of the runs
    left out go to ``left_out`` (per (model, task))."""
    chosen, repeated = {}, []
    docs = {} if docs is None else docs
    left_out = {} if left_out is None else left_out
    for (model, task), lst in runs.items():
        lst = sorted(lst)
        if len(lst) > 1:
            runs_of = f"{len(lst)} runs"
            if duplicates == "error":
                refuse_repeated_runs(arg, model, task, [_shown(f) for _, _, f in lst])
            if duplicates in ("last", "first"):
                kept = lst[-1] if duplicates == "last" else lst[0]
                limit = _limit_of(kept[2], kept[0], docs, arg)
                full = sum(not _limit_of(f, ts, docs, arg) for ts, _, f in lst if f != kept[2])
                if limit and full:
                    runs_of += (f"; the run kept ran with --limit {limit}, {full} left out on every document: delete "
                                "the --limit run's files to read the whole run")
                left_out[(model, task)] = [f for _, _, f in lst if f != kept[2]]
                lst = [kept]
            repeated.append(f"model {model!r}, task {task!r} ({runs_of})")
        chosen[(model, task)] = [f for _, _, f in lst]
    warn_repeated_runs(arg, repeated, duplicates, "latest", stacklevel=4)
    return chosen
