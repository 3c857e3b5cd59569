"""Bad-input campaign over the ``effstats`` command line, shared by tests/test_cli_fuzz.py and scripts/fuzz_report.py.

A :class:`Workspace` holds small real inputs of every command (lm-eval logs and CSV tables of 12 reference models on
2 tasks, a selection and the new model's results on it, a sequential run and its first batch, a leaderboard table),
and the commands' results on them (the baselines). :func:`cases` derives the bad inputs systematically from them:
every field of an lm-eval sample record set to every kind of bad value, removed, or joined by others; whole files
corrupted (empty, binary, cut, compressed, copied, encoded otherwise); CSV tables in wrong layouts or with bad
cells; every option of every command given bad values; each where the command reads it (the reference of
``select`` and ``sequential start``, the new results of ``estimate``, the batch of ``sequential update``, the
scores of ``audit``).

Each case is run in-process (:func:`effstats.cli.main`, stdout and stderr captured) and classified:

* ``clear``     -- exit status 2 with exactly one line on stderr, starting ``effstats``; the input was bad;
* ``ok``        -- exit status 0 and a correct result: for inputs that mean the same as the clean ones (a log
  compressed, a line ending changed, a field that does not enter the result spoilt), the same result as the clean
  input's; for others the result recomputed from the data by brute force (the mean of the new model's scores on
  the chosen items, the number of items read, the first look's mean);
* ``traceback`` -- an exception escaped the command (what a user sees as a traceback), or a status other than 0/2;
* ``unclear``   -- status 2 but not one line (several lines, a traceback text, an empty message);
* ``silent``    -- a silent wrong result: status 0 on an input that must be refused, or a result that differs
  from the correct one;
* ``refused``   -- a valid input refused (status 2 where a result was due).

Expectations: ``REFUSE`` (the input is bad), ``SAME`` (it means the clean input), ``EITHER`` (a clear refusal or
the correct result). A case may carry its own check of the result instead of "the same as the clean input".
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import shutil
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

REFUSE, SAME, EITHER = "refuse", "same", "either"
STATUSES = ("clear", "ok", "traceback", "unclear", "silent", "refused")
BAD = ("traceback", "unclear", "silent")  # never allowed; "refused" is counted and listed

TASKS = {"arc": 16, "hs": 14}
N_REF = 12
NEW = "org/m12"
TS = "2026-01-01T00-00-00.000000"


# ----------------------------------------------------------------------------------------------------- workspace
def _run_main(argv: list[str]) -> tuple[int | None, str, str, str | None]:
    """(exit status, stdout, stderr, traceback text or None) of ``effstats argv`` run in this process."""
    from effstats.cli import main

    out, err = io.StringIO(), io.StringIO()
    tb = None
    code: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warnings reach stderr through the command's own lines only
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse's exits are caught by main; any other is a defect
            tb = f"SystemExit({exc.code!r}) escaped"
        except BaseException:  # noqa: BLE001 -- any exception escaping the command is what the campaign looks for
            tb = traceback.format_exc()
    return code, out.getvalue(), err.getvalue(), tb


class Workspace:
    """The clean inputs of every command under ``root`` and the commands' results on them."""

    def __init__(self, root: Path):
        from effstats import ResponseMatrix
        from effstats.datasets import simulate_responses
        from effstats.workflow import write_lm_eval_samples

        self.root = root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        n_items = sum(TASKS.values())
        d = simulate_responses(N_REF + 3, n_items, rng=7)
        ids = [f"{t}/{k}" for t, n in TASKS.items() for k in range(n)]
        self.truth = ResponseMatrix(d.values.astype(float), model_ids=[f"org/m{i:02d}" for i in range(N_REF + 3)],
                                    item_ids=ids)
        ref = self.truth.subset(models=range(N_REF))
        write_lm_eval_samples(ref, root / "ref", timestamp=TS)
        self.long = ref.to_long()[["model", "item", "score"]]
        self.long.to_csv(root / "ref.csv", index=False)
        wide = pd.DataFrame(ref.values, index=pd.Index(ref.model_ids, name="model"), columns=ref.item_ids)
        wide.to_csv(root / "ref_wide.csv")
        # a selection from the logs and one from the table; the new model's results on each
        self._ok(["select", root / "ref", "--budget", 10, "--method", "random", "--out", root / "sel"])
        self._ok(["select", root / "ref.csv", "--budget", 10, "--method", "random", "--out", root / "selc"])
        self.items = json.loads((root / "sel" / "manifest.json").read_text())["items"]
        self.items_c = json.loads((root / "selc" / "manifest.json").read_text())["items"]
        write_lm_eval_samples(self.truth.subset(models=[N_REF], items=self.items), root / "new", timestamp=TS)
        self.scores_of(self.items_c).to_csv(root / "new.csv", index=False)
        # sequential runs (precision rule ± 0.05: 6 items never decide, batches of 6) from the logs and from the table,
        # and their first batches
        for name, src in (("seq", root / "ref"), ("seqc", root / "ref.csv")):
            self._ok(["sequential", "start", src, "--half-width", 0.05, "--initial", 6, "--batch", 6, "--out",
                      root / name])
        self.batch = pd.read_csv(root / "seq" / "batch_001" / "items.csv")["item"].tolist()
        self.batch_c = pd.read_csv(root / "seqc" / "batch_001" / "items.csv")["item"].tolist()
        write_lm_eval_samples(self.truth.subset(models=[N_REF], items=self.batch), root / "b1", timestamp=TS)
        self.scores_of(self.batch_c).to_csv(root / "b1.csv", index=False)
        # a leaderboard for the audit: 8 models x 5 scenarios, a published mean
        rng = np.random.default_rng(3)
        board = pd.DataFrame(np.clip(np.linspace(0.8, 0.3, 8)[:, None] + rng.normal(0, 0.05, (8, 5)), 0, 1).round(3),
                             index=pd.Index([f"model-{c}" for c in "abcdefgh"], name="model"),
                             columns=list("ABCDE"))
        self.board = board
        board.to_csv(root / "board.csv")
        # the clean results every SAME case is compared with
        self.base: dict[str, Any] = {}
        for key, argv in self.baseline_argv().items():
            out = root / "base" / key
            if argv[:2] == ["sequential", "update"]:  # on a copy: the workspace's run stays before its first look
                argv = [*argv[:2], _copy(Path(argv[2]), out), *argv[3:]]
            self.base[key] = self.result(key, self._ok(self.with_out(argv, out)), out)
        self._check_baselines()

    # the commands on the clean inputs (``--out`` is added per case)
    def baseline_argv(self) -> dict[str, list]:
        r = self.root
        return {"select": ["select", r / "ref", "--budget", 10, "--method", "random"],
                "select-csv": ["select", r / "ref.csv", "--budget", 10, "--method", "random"],
                "estimate": ["estimate", r / "sel", r / "new"],
                "estimate-csv": ["estimate", r / "selc", r / "new.csv"],
                "update": ["sequential", "update", r / "seq", r / "b1"],
                "update-csv": ["sequential", "update", r / "seqc", r / "b1.csv"],
                "start": ["sequential", "start", r / "ref", "--half-width", 0.05, "--initial", 6, "--batch", 6],
                "audit": ["audit", r / "board.csv", "--n-boot", 20, "--no-progress"]}

    @staticmethod
    def with_out(argv: list, out: Path) -> list:
        argv = list(argv)
        if argv[0] == "sequential" and argv[1] == "update":
            return argv  # writes into its DIR
        return argv + ["--out", out]

    @staticmethod
    def weighted_mean(scores: pd.DataFrame) -> float:
        """The whole benchmark's score from a random sample stratified by task: each task's mean weighted by the
        task's size (``--weights items``)."""
        task = scores["item"].str.split("/").str[0]
        means = scores.groupby(task)["score"].mean()
        size = pd.Series(TASKS)[means.index]
        return float((means * size).sum() / size.sum())

    def scores_of(self, items: list[str], model: int = N_REF) -> pd.DataFrame:
        vals = self.truth.subset(models=[model], items=items).values[0]
        return pd.DataFrame({"model": "new", "item": items, "score": vals})

    def _ok(self, argv: list) -> str:
        code, out, err, tb = _run_main([str(a) for a in argv])
        if code != 0:
            raise RuntimeError(f"the clean call {argv} failed ({code}): {err or tb}")
        return out

    def result(self, key: str, stdout: str, out: Path) -> dict:
        """What a command produced, in a form two runs can be compared in."""
        kind = key.split("-")[0]
        if kind in ("select", "start"):
            name = "manifest.json" if kind == "select" else "state.json"
            doc = json.loads((out / name).read_text())
            ref = doc["reference"]
            if kind == "select":
                return {"items": doc["items"], "n_models": ref["n_models"], "n_items": ref["n_items"]}
            return {"order": doc["order"], "n_eligible": doc["n_eligible"], "batch": doc.get("batch")}
        if kind == "estimate":
            est = pd.read_csv(out / "estimate.csv")
            return {"estimate": est["estimate"].round(10).tolist(), "rank": est["rank"].tolist(),
                    "models": est.iloc[:, 0].astype(str).tolist()}
        if kind == "update":
            return {"look": stdout.splitlines()[0]}
        if kind == "audit":
            scores = pd.read_csv(out / "scores.csv")
            return {"models": scores.iloc[:, 0].astype(str).tolist()}
        raise KeyError(key)

    def _check_baselines(self) -> None:
        """The clean results themselves, by brute force."""
        b = self.base
        assert b["select"]["n_items"] == b["select-csv"]["n_items"] == sum(TASKS.values())
        assert b["select"]["n_models"] == N_REF and len(b["select"]["items"]) == 10
        for key, items in (("estimate", self.items), ("estimate-csv", self.items_c)):
            mean = self.weighted_mean(self.scores_of(items))  # the random method: stratified by task
            assert abs(b[key]["estimate"][0] - mean) < 1e-9, (key, b[key], mean)
        for key, items in (("update", self.batch), ("update-csv", self.batch_c)):
            mean = float(self.scores_of(items)["score"].mean())
            assert f"score {mean:.4f}" in b[key]["look"], (key, b[key], mean)
        ranked = self.board.mean(axis=1).sort_values(ascending=False).index.tolist()
        assert b["audit"]["models"][0] == ranked[0]


# ----------------------------------------------------------------------------------------------------- cases
@dataclass
class Case:
    """One command line on one bad (or odd) input: ``build(ws, dir)`` writes the input into ``dir`` and returns
    the arguments; ``base`` names the clean result a SAME case must reproduce; ``check(ws, dir, stdout)`` returns
    a complaint (or None) about an accepted result, for cases whose correct result differs from the clean one."""

    name: str
    command: str
    build: Callable[[Workspace, Path], list]
    expect: str
    base: str | None = None
    check: Callable[[Workspace, Path, str], str | None] | None = None
    tags: tuple = field(default_factory=tuple)


@dataclass
class Outcome:
    case: str
    command: str
    status: str
    detail: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        return f"{self.status:<9} {self.case}: {self.detail}"


def run_case(ws: Workspace, case: Case, tmp: Path) -> Outcome:
    d = Path(tmp)
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        argv = case.build(ws, d)
    except Exception as exc:  # noqa: BLE001 -- a broken case is reported, not raised
        return Outcome(case.name, case.command, "traceback", f"the case could not be built: {exc!r}")
    _ARGV[d] = argv
    code, out, err, tb = _run_main([str(a) for a in argv])
    secs = time.perf_counter() - t0
    o = Outcome(case.name, case.command, "", "", secs)
    if tb is not None:
        o.status, o.detail = "traceback", tb.strip().splitlines()[-1]
        return o
    if code == 2:
        lines = err.strip().splitlines()
        if len(lines) != 1 or "Traceback" in err or not lines[0].startswith("effstats") or "error:" not in lines[0]:
            o.status, o.detail = "unclear", " / ".join(lines[:4]) or "(nothing on stderr)"
        elif case.expect == SAME:
            o.status, o.detail = "refused", lines[0]
        else:
            o.status, o.detail = "clear", lines[0]
        return o
    if code != 0:
        o.status, o.detail = "traceback", f"exit status {code}: {err.strip()[:200]}"
        return o
    if case.expect == REFUSE:
        o.status, o.detail = "silent", f"accepted: {out.strip().splitlines()[:1]}"
        return o
    try:
        complaint = case.check(ws, d, out) if case.check else _same(ws, case, d, out)
    except Exception as exc:  # noqa: BLE001 -- a result that cannot be read back is wrong
        complaint = f"the result could not be read back: {exc!r}"
    o.status, o.detail = ("silent", complaint) if complaint else ("ok", "")
    return o


def _out_dir(argv: list, d: Path) -> Path:
    if argv[0] == "sequential" and argv[1] == "update":
        return Path(argv[2]) if Path(argv[2]).is_dir() else Path(argv[2]).parent
    return Path(argv[argv.index("--out") + 1]) if "--out" in argv else d / "out"


def _same(ws: Workspace, case: Case, d: Path, out: str) -> str | None:
    key = case.base or case.command
    got = ws.result(key, out, _out_dir(_argv_of(d), d))
    want = ws.base[key]
    return None if got == want else f"result {got} differs from the clean input's {want}"


# ---- helpers writing inputs
def _copy(src: Path, dst: Path) -> Path:
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy(src, dst)
    return dst


def _log(folder: Path, model: str, task: str = "arc") -> Path:
    return folder / model.replace("/", "__") / f"samples_{task}_{TS}.jsonl"


def _records(f: Path) -> list[dict]:
    return [json.loads(x) for x in f.read_text().splitlines() if x.strip()]


def _write_records(f: Path, recs: list) -> None:
    f.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in recs))


# where each kind of results input sits, and how the command around it is called
@dataclass
class Slot:
    """An input a command reads: copied into the case folder, spoilt there, and the command's arguments."""

    key: str  # baseline key
    source: str  # path under the workspace
    model: str  # the model whose log is spoilt
    argv: Callable[[Workspace, Path, Path], list]  # (ws, case dir, spoilt input) -> arguments

    def place(self, ws: Workspace, d: Path) -> Path:
        return _copy(ws.root / self.source, d / Path(self.source).name)


def _select_argv(ws, d, p):
    return ["select", p, "--budget", 10, "--method", "random", "--out", d / "out"]


def _estimate_argv(ws, d, p, sel="sel"):
    return ["estimate", ws.root / sel, p, "--out", d / "out"]


def _update_argv(ws, d, p, seq="seq"):
    return ["sequential", "update", _copy(ws.root / seq, d / seq), p]


def _start_argv(ws, d, p):
    return ["sequential", "start", p, "--half-width", 0.05, "--initial", 6, "--batch", 6, "--out", d / "out"]


LOG_SLOTS = [Slot("select", "ref", "org/m03", _select_argv), Slot("estimate", "new", NEW, _estimate_argv),
             Slot("update", "b1", NEW, _update_argv)]
CSV_SLOTS = [Slot("select-csv", "ref.csv", "", _select_argv),
             Slot("estimate-csv", "new.csv", "", lambda ws, d, p: _estimate_argv(ws, d, p, "selc")),
             Slot("update-csv", "b1.csv", "", lambda ws, d, p: _update_argv(ws, d, p, "seqc"))]


def _case(name: str, slot: Slot, spoil: Callable[[Path, Slot], Any], expect: str, check=None, tags=()) -> Case:
    """A case that copies the slot's input, spoils it with ``spoil(path, slot)`` and runs the slot's command."""
    def build(ws: Workspace, d: Path) -> list:
        p = slot.place(ws, d)
        new = spoil(p, slot)
        return slot.argv(ws, d, new if isinstance(new, Path) else p)

    case = Case(f"{slot.key}: {name}", slot.key.split("-")[0], build, expect, base=slot.key, check=check,
                tags=tags)
    return case


# ---- bad values for the fields of an lm-eval sample record
NAN, INF = float("nan"), float("inf")
VALUES = {  # label -> JSON text of the value (NaN / Infinity are what Python's json writes)
    "null": "null", "text": '"abc"', "empty-text": '""', "digit-text": '"5"', "negative": "-7", "huge": "1e30",
    "huge-int": "1" + "0" * 30, "beyond-float": "1" + "0" * 400, "giant-int": "1" * 5000, "fraction": "5.5",
    "true": "true", "false": "false", "empty-list": "[]",
    "list": "[1]", "empty-dict": "{}", "dict": '{"a": 1}', "nan": "NaN", "inf": "Infinity", "-inf": "-Infinity",
    "nested": "[" * 50 + "]" * 50, "zero": "0", "one": "1", "half": "0.5", "two": "2", "tiny": "1e-320",
    "over-one": "1.0000001",
}
# the expectation per (field, label): fields that do not enter the 0/1 result may hold anything (the same result,
# or a clear refusal); doc_id and the metric are checked strictly
FIELDS = {
    "doc_id": {lab: REFUSE for lab in VALUES},
    "acc": {lab: REFUSE for lab in VALUES},
    "target": {lab: EITHER for lab in VALUES},
    "resps": {lab: EITHER for lab in VALUES},
    "filtered_resps": {lab: EITHER for lab in VALUES},
    "arguments": {lab: SAME for lab in VALUES},
    "filter": {lab: EITHER for lab in VALUES},
    "doc": {lab: SAME for lab in VALUES},
    "metrics": {lab: SAME for lab in VALUES},
}
for _expects in FIELDS.values():  # Python's json refuses integers of over 4,300 digits: the line cannot be read
    _expects["giant-int"] = REFUSE if _expects["giant-int"] == REFUSE else EITHER
FIELDS["doc_id"]["zero"] = REFUSE  # a second document 0 in the file, or one not chosen
FIELDS["doc_id"]["one"] = EITHER  # the spoilt record is document 1 in the reference: no change there
FIELDS["acc"].update({"zero": EITHER, "one": EITHER, "true": EITHER, "false": EITHER, "half": EITHER,
                      "tiny": EITHER})
FIELDS["acc"]["nan"] = EITHER  # a failed document (NaN metric): a missing cell, checked as the mean without it


LINE = 1  # the record spoilt: never document 0, so that doc_id=0 repeats a document or names another


def _set_field(fieldname: str, text: str, line: int = LINE):
    def spoil(p: Path, slot: Slot) -> None:
        f = _log(p, slot.model)
        recs = _records(f)
        rec = dict(recs[line])
        rec[fieldname] = "\x00PLACEHOLDER\x00"
        recs[line] = json.dumps(rec).replace(json.dumps("\x00PLACEHOLDER\x00"), text)
        _write_records(f, recs)
    return spoil


def _field_check(slot: Slot, fieldname: str, text: str, expect: str):
    """The check of an accepted result: the clean one where the field does not enter it; for ``acc`` set to
    another valid number, the result recomputed with that number."""
    if fieldname != "acc":
        return None

    def check(ws: Workspace, d: Path, out: str) -> str | None:
        value = float(json.loads(text.replace("true", "1").replace("false", "0")))
        kind = slot.key.split("-")[0]
        got = ws.result(slot.key, out, _out_dir(_argv_of(d), d))
        if kind == "select":
            want = ws.base[slot.key]
            return None if got["n_items"] == want["n_items"] and got["n_models"] == want["n_models"] \
                else f"read {got} from the logs, expected {want['n_models']} models x {want['n_items']} items"
        items = ws.items if kind == "estimate" else ws.batch
        scores = ws.scores_of(items)
        doc = _records(_log(ws.root / slot.source, slot.model))[LINE]["doc_id"]
        scores.loc[scores["item"] == f"arc/{doc}", "score"] = value
        mean = ws.weighted_mean(scores) if kind == "estimate" else float(scores["score"].mean())
        if kind == "estimate":
            return None if abs(got["estimate"][0] - mean) < 1e-9 else f"estimate {got['estimate'][0]}, expected {mean}"
        return None if f"score {mean:.4f}" in got["look"] else f"look {got['look']!r}, expected the mean {mean:.4f}"
    return check


_ARGV: dict[Path, list] = {}


def _argv_of(d: Path) -> list:
    return _ARGV[d]


def _record_cases() -> list[Case]:
    out = []
    for slot in LOG_SLOTS:
        for fieldname, expects in FIELDS.items():
            for label, text in VALUES.items():
                expect = expects[label]
                out.append(_case(f"record field {fieldname}={label}", slot, _set_field(fieldname, text), expect,
                                 check=_field_check(slot, fieldname, text, expect), tags=("record",)))
            # the field left out
            def drop(p, s, fieldname=fieldname):
                f = _log(p, s.model)
                recs = _records(f)
                recs[LINE].pop(fieldname, None)
                _write_records(f, recs)
            expect = {"doc_id": REFUSE, "acc": SAME}.get(fieldname, EITHER if fieldname in ("target", "resps",
                                                                                        "filtered_resps") else SAME)
            out.append(_case(f"record without {fieldname}", slot, drop, expect, tags=("record",)))
        # whole records
        def acc_only(p, s):  # acc recomputed from the loglikelihoods where it is not logged: the same 0/1 values
            for f in (p.rglob("samples_*.jsonl")):
                _write_records(f, [{k: v for k, v in r.items() if k != "acc"} for r in _records(f)])
        out.append(_case("records without acc anywhere (recomputed)", slot, acc_only, SAME, tags=("record",)))
    return out


# ---- whole-file corruptions of a log
def _file_spoilers() -> dict[str, tuple[Callable[[Path], Any], str]]:
    """label -> (spoil(file), expectation)"""
    def lines(f):
        return f.read_text().splitlines()

    def put(f, ls):
        f.write_text("\n".join(ls) + "\n")

    def rec_at(f, k, text):
        ls = lines(f)
        ls[k] = text
        put(f, ls)

    def compress(ext, mod):
        def spoil(f):
            Path(str(f) + ext).write_bytes(mod.compress(f.read_bytes()))
            f.unlink()
        return spoil

    def deep(f):
        ls = lines(f)
        rec = json.loads(ls[2])
        ls[2] = json.dumps(rec)[:-1] + ', "doc2": ' + "[" * 100_000 + "]" * 100_000 + "}"
        put(f, ls)

    def renamed(suffix):
        def spoil(f):
            shutil.copy(f, f.with_name(f.name.replace(".jsonl", f"{suffix}.jsonl")))
        return spoil

    return {
        "empty file": (lambda f: f.write_text(""), REFUSE),
        "blank lines only": (lambda f: f.write_text("\n \n\n"), REFUSE),
        "binary junk": (lambda f: f.write_bytes(bytes(range(256)) * 8), REFUSE),
        "NUL bytes": (lambda f: f.write_bytes(b"\x00" * 1000), REFUSE),
        "bad JSON line in the middle": (lambda f: rec_at(f, 2, '{"doc_id": 2, "acc": 1.0,'), REFUSE),
        "truncated last line": (lambda f: f.write_text(f.read_text()[:-40]), REFUSE),
        "a line that is a list": (lambda f: rec_at(f, 2, "[1, 2, 3]"), REFUSE),
        "a line that is a number": (lambda f: rec_at(f, 2, "42"), REFUSE),
        "a line that is a string": (lambda f: rec_at(f, 2, '"doc"'), REFUSE),
        "a line that is null": (lambda f: rec_at(f, 2, "null"), REFUSE),
        "a record twice": (lambda f: put(f, lines(f) + [lines(f)[2]]), REFUSE),
        "records shuffled": (lambda f: put(f, lines(f)[::-1]), SAME),
        "blank lines between records": (lambda f: put(f, [x for ln in lines(f) for x in (ln, "", "  ")]), SAME),
        "CRLF line endings": (lambda f: f.write_bytes(f.read_bytes().replace(b"\n", b"\r\n")), SAME),
        "no final newline": (lambda f: f.write_text(f.read_text().rstrip("\n")), SAME),
        "UTF-8 byte order mark": (lambda f: f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes()), EITHER),
        "UTF-16": (lambda f: f.write_bytes(f.read_text().encode("utf-16")), REFUSE),
        "latin-1 byte in a record": (lambda f: f.write_bytes(f.read_bytes().replace(b"question", b"qu\xe9stion", 1)),
                                     REFUSE),
        "a 100,000-deep nested field": (deep, EITHER),
        "a 2 MB field": (lambda f: rec_at(f, 2, json.dumps({**json.loads(lines(f)[2]), "doc": "x" * 2_000_000})),
                         SAME),
        "gzip": (compress(".gz", gzip), SAME),
        "bz2": (compress(".bz2", bz2), SAME),
        "xz": (compress(".xz", lzma), SAME),
        "corrupt gzip": (lambda f: (Path(str(f) + ".gz").write_bytes(gzip.compress(f.read_bytes())[:-30]),
                                    f.unlink()), REFUSE),
        "gzip without the .gz ending": (lambda f: f.write_bytes(gzip.compress(f.read_bytes())), SAME),
        "Git LFS pointer": (lambda f: f.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:"
                                                    + "0" * 64 + "\nsize 1234\n"), REFUSE),
        "a copy named ' (1)'": (renamed(" (1)"), SAME),
        "a copy named ' - Copy'": (renamed(" - Copy"), SAME),
        "a copy named '.jsonl.bak'": (lambda f: shutil.copy(f, str(f) + ".bak"), SAME),
        "a copy in a subfolder": (lambda f: (f.parent / "old").mkdir() or shutil.copy(f, f.parent / "old" / f.name),
                                  EITHER),
        "the log removed": (lambda f: f.unlink(), EITHER),
        "a folder named like a log": (lambda f: (f.parent / f"samples_extra_{TS}.jsonl").mkdir(), EITHER),
        "the results file is not JSON": (lambda f: f.with_name(f"results_{TS}.json").write_text("{oops"), REFUSE),
        "the results file is a list": (lambda f: f.with_name(f"results_{TS}.json").write_text("[1]"), EITHER),
        "the results file removed": (lambda f: f.with_name(f"results_{TS}.json").unlink(), SAME),
        "the results file names another model": (
            lambda f: f.with_name(f"results_{TS}.json").write_text(json.dumps({"model_name": "other/model"})),
            EITHER),
    }


def _got_want(ws: Workspace, slot: Slot, d: Path, out: str) -> tuple[str, dict, dict]:
    """(command, its result in the case folder, the clean input's result)."""
    return slot.key.split("-")[0], ws.result(slot.key, out, _out_dir(_argv_of(d), d)), ws.base[slot.key]


def _check_file_case(slot: Slot, label: str):
    """Accepted results of the file cases where the data legitimately change: what was read must still be whole."""
    if label not in ("the log removed", "the results file is a list", "a copy in a subfolder",
                     "the results file names another model", "a 100,000-deep nested field", "UTF-8 byte order mark",
                     "a folder named like a log"):
        return None

    def check(ws: Workspace, d: Path, out: str) -> str | None:
        kind, got, want = _got_want(ws, slot, d, out)
        if label == "the log removed" and kind == "select":
            # one model without one task: the same items, that model's cells missing
            return None if got["n_items"] == want["n_items"] and got["n_models"] == want["n_models"] else \
                f"read {got}, expected {want['n_models']} models x {want['n_items']} items"
        if kind == "select" and label == "the results file names another model":
            return None if got["n_models"] == want["n_models"] else f"{got['n_models']} models read"
        if kind == "select" and label == "a copy in a subfolder":  # a model named by the folder "old"
            return None if got["n_models"] == want["n_models"] + 1 else f"{got['n_models']} models read"
        if kind == "estimate":  # the model may be named otherwise: its estimate is the same
            got, want = got["estimate"], want["estimate"]
        return None if got == want else f"result {got} differs from the clean input's {want}"
    return check


def _file_cases() -> list[Case]:
    out = []
    for slot in LOG_SLOTS:
        for label, (spoil, expect) in _file_spoilers().items():
            out.append(_case(f"log: {label}", slot, lambda p, s, spoil=spoil: spoil(_log(p, s.model)), expect,
                             check=_check_file_case(slot, label), tags=("file",)))

        def empty_folder(p, s):
            shutil.rmtree(p)
            p.mkdir()
        out.append(_case("an empty folder", slot, empty_folder, REFUSE, tags=("file",)))

        def no_logs(p, s):
            for f in p.rglob("samples_*"):
                f.unlink()
        out.append(_case("a folder of results files only", slot, no_logs, REFUSE, tags=("file",)))
        out.append(_case("one log file given (not its folder)", slot, lambda p, s: _log(p, s.model),
                         REFUSE if slot.key == "select" else EITHER, check=None, tags=("file",)))
        out.append(_case("a path that does not exist", slot, lambda p, s: p.parent / "nowhere", REFUSE,
                         tags=("file",)))
    return out


# ---- CSV tables
def _csv_spoilers(slot_key: str) -> dict[str, tuple[Callable[[Path], Any], str]]:
    def df(p):
        return pd.read_csv(p)

    def cell(p, col, value, row=2):
        t = df(p).astype(object)
        t.loc[row, col] = value
        t.to_csv(p, index=False)

    def wide(p):  # the same table: its items in the long file's order (pivot sorts them as text)
        t = df(p)
        w = t.pivot(index="model", columns="item", values="score")[t["item"].unique()]
        w.reset_index().to_csv(p, index=False)

    def transposed(p):
        t = df(p)
        t.pivot(index="item", columns="model", values="score").reset_index().to_csv(p, index=False)

    return {
        "empty file": (lambda p: p.write_text(""), REFUSE),
        "header only": (lambda p: p.write_text("model,item,score\n"), REFUSE),
        "binary junk": (lambda p: p.write_bytes(bytes(range(256)) * 4), REFUSE),
        "no header": (lambda p: p.write_text("".join(p.read_text().splitlines(True)[1:])), REFUSE),
        "columns renamed": (lambda p: p.write_text(p.read_text().replace("model,item,score", "who,what,value", 1)),
                            REFUSE),
        "score column missing": (lambda p: df(p)[["model", "item"]].to_csv(p, index=False), REFUSE),
        "an extra text column": (lambda p: df(p).assign(note="x").to_csv(p, index=False), EITHER),
        "columns reordered": (lambda p: df(p)[["score", "item", "model"]].to_csv(p, index=False), SAME),
        "wide layout": (wide, SAME),
        "transposed wide layout": (transposed, REFUSE),
        "semicolon separated": (lambda p: df(p).to_csv(p, index=False, sep=";"), SAME),
        "tab separated in a .csv": (lambda p: df(p).to_csv(p, index=False, sep="\t"), SAME),
        "CRLF line endings": (lambda p: p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n")), SAME),
        "UTF-8 byte order mark": (lambda p: p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes()), SAME),
        "UTF-16": (lambda p: p.write_bytes(p.read_text().encode("utf-16")), EITHER),
        "scores as true/false": (lambda p: df(p).assign(score=lambda t: t.score.astype(bool)).to_csv(p, index=False),
                                 SAME),
        "scores in percent": (lambda p: df(p).assign(score=lambda t: t.score * 100).to_csv(p, index=False), REFUSE),
        "a score of NaN": (lambda p: cell(p, "score", "nan"), EITHER),
        "a score of inf": (lambda p: cell(p, "score", "inf"), REFUSE),
        "a score of -inf": (lambda p: cell(p, "score", "-inf"), REFUSE),
        "a score of 1e308": (lambda p: cell(p, "score", "1e308"), REFUSE),
        "a score of 1e999": (lambda p: cell(p, "score", "1e999"), REFUSE),
        "a score of -1": (lambda p: cell(p, "score", "-1"), REFUSE),
        "a score of 2": (lambda p: cell(p, "score", "2"), REFUSE),
        "a score of 1.0000001": (lambda p: cell(p, "score", "1.0000001"), REFUSE),
        "a score of -0.0": (lambda p: cell(p, "score", "-0.0"), EITHER),
        "a score of 'abc'": (lambda p: cell(p, "score", "abc"), REFUSE),
        "a score of '0,5'": (lambda p: cell(p, "score", "0,5"), REFUSE),
        "a score of ''": (lambda p: cell(p, "score", ""), EITHER),
        "a score of 0.5": (lambda p: cell(p, "score", "0.5"), EITHER),
        "an empty model name": (lambda p: cell(p, "model", ""), REFUSE),
        "an empty item id": (lambda p: cell(p, "item", ""), REFUSE),
        "an item of no task": (lambda p: cell(p, "item", "orphan"), REFUSE),
        "a row twice": (lambda p: pd.concat([df(p), df(p).iloc[[2]]]).to_csv(p, index=False), SAME),
        "a row twice with another score": (lambda p: pd.concat([df(p), df(p).iloc[[2]].assign(score=lambda t:
                                                                1 - t.score)]).to_csv(p, index=False), EITHER),
        "a formula in a cell": (lambda p: cell(p, "model", "=HYPERLINK(\"x\")"), EITHER),
        "a quoted newline in a name": (lambda p: cell(p, "model", "a\nb"), EITHER),
        "a .tsv ending on a comma file": (lambda p: p.rename(p.with_suffix(".tsv")) and p.with_suffix(".tsv"),
                                          EITHER),
        "a .txt ending": (lambda p: shutil.move(p, p.with_suffix(".txt")) and p.with_suffix(".txt"), SAME),
        "gzip compressed .csv.gz": (lambda p: (p.with_suffix(".csv.gz").write_bytes(gzip.compress(p.read_bytes())),
                                               p.unlink()) and p.with_suffix(".csv.gz"), SAME),
        "a path that does not exist": (lambda p: p.with_name("nowhere.csv"), REFUSE),
        "a folder": (lambda p: (p.unlink(), p.mkdir()) and p, REFUSE),
    }


def _csv_check(slot: Slot, label: str):
    if label not in ("a score of 0.5", "a score of NaN", "a score of ''", "a row twice with another score",
                     "an extra text column", "UTF-16", "a score of -0.0", "a formula in a cell",
                     "a quoted newline in a name", "a .tsv ending on a comma file", "an item of no task"):
        return None

    def check(ws: Workspace, d: Path, out: str) -> str | None:
        kind, got, want = _got_want(ws, slot, d, out)
        if kind == "select":
            # a cell renamed: one model (or item) more, holding that one cell
            n_models = want["n_models"] + (label in ("a formula in a cell", "a quoted newline in a name"))
            n_items = want["n_items"] + (label == "an item of no task")
            return None if (got["n_items"], got["n_models"]) == (n_items, n_models) else \
                f"read {got['n_models']} models x {got['n_items']} items, expected {n_models} x {n_items}"
        table = pd.read_csv(ws.root / slot.source)
        if label in ("a score of NaN", "a score of ''"):
            table = table.drop(index=2)
        elif label == "a score of 0.5":
            table.loc[2, "score"] = 0.5
        elif label == "a row twice with another score":  # the last row is kept (the documented default)
            table.loc[2, "score"] = 1 - table.loc[2, "score"]
        mean = ws.weighted_mean(table) if kind == "estimate" else float(table["score"].mean())
        if kind == "estimate":
            return None if abs(got["estimate"][0] - mean) < 1e-9 else f"estimate {got['estimate'][0]}, expected {mean}"
        return None if f"score {mean:.4f}" in got["look"] else f"look {got['look']!r}, expected the mean {mean:.4f}"
    return check


def _csv_cases() -> list[Case]:
    out = []
    for slot in CSV_SLOTS:
        for label, (spoil, expect) in _csv_spoilers(slot.key).items():
            if slot.key == "select-csv" and label == "an item of no task":
                expect = EITHER  # a reference item need not be <task>/<doc_id>
            def sp(p, s, spoil=spoil):
                r = spoil(p)
                return r if isinstance(r, Path) else None
            out.append(_case(f"table: {label}", slot, sp, expect, check=_csv_check(slot, label), tags=("csv",)))
    return out


# ---- options
def _option_cases() -> list[Case]:
    out: list[Case] = []

    def add(name, command, argv_fn, expect, base=None, check=None):
        def build(ws, d, argv_fn=argv_fn):
            argv = [a for a in argv_fn(ws, d)]
            _ARGV[d] = argv
            return argv
        c = Case(name, command, build, expect, base=base, check=check, tags=("option",))
        out.append(c)

    def sel(*extra):
        return lambda ws, d: ["select", ws.root / "ref", "--budget", 10, "--method", "random", "--out", d / "out",
                              *extra]

    def sel_n(*extra):  # without --budget
        return lambda ws, d: ["select", ws.root / "ref", "--out", d / "out", *extra]

    for v, e in [(0, REFUSE), (-1, REFUSE), (1, REFUSE), (31, REFUSE), (10**6, REFUSE), (10**30, REFUSE),
                 ("abc", REFUSE), ("1.5", REFUSE), ("", REFUSE), ("1e2", REFUSE), ("nan", REFUSE), (" 10", SAME),
                 ("+10", SAME), ("010", SAME)]:
        add(f"select --budget {v!r}", "select", sel_n("--budget", v, "--method", "random"), e, base="select")
    for v, e in [(0, REFUSE), (-1, REFUSE), ("nan", REFUSE), ("inf", REFUSE), ("-inf", REFUSE), ("abc", REFUSE),
                 ("", REFUSE), (1e-9, EITHER), (1e9, EITHER), (50, EITHER)]:
        add(f"select --target-error {v!r}", "select", sel_n("--target-error", v, "--method", "random"), e,
            check=_select_whole)
    add("select --budget and --target-error", "select", sel("--target-error", 5), REFUSE)
    add("select without a budget", "select", sel_n(), REFUSE)
    from effstats.workflow._tasks import METHODS
    for m in METHODS:
        add(f"select --method {m}", "select", lambda ws, d, m=m: ["select", ws.root / "ref", "--budget", 10,
                                                                   "--method", m, "--out", d / "out"],
            EITHER, check=_select_whole)
    for v in ["bogus", "", "RANDOM"]:
        add(f"select --method {v!r}", "select", lambda ws, d, v=v: ["select", ws.root / "ref", "--budget", 10,
                                                                     "--method", v, "--out", d / "out"], REFUSE)
    for v, e in [("", EITHER), (",", EITHER), ("nope", REFUSE), ("arc,nope", REFUSE), ("arc,arc", EITHER),
                 (" arc , hs ", SAME), ("arc,hs", SAME), ("ARC", REFUSE), ("arc", EITHER)]:
        add(f"select --tasks {v!r}", "select", sel("--tasks", v), e, base="select",
            check=None if e == SAME else _select_tasks(v))
    for v, e in [(-1, REFUSE), (2**64, EITHER), ("x", REFUSE), ("1.5", REFUSE), ("", REFUSE), (0, SAME)]:
        add(f"select --seed {v!r}", "select", sel("--seed", v), e, base="select",
            check=_select_whole if e == EITHER else None)
    for v, e in [("", REFUSE), ("nope", REFUSE), ("doc_id", REFUSE), ("target", REFUSE), ("resps", REFUSE),
                 ("filter", REFUSE), ("doc", REFUSE), ("metrics", REFUSE), ("acc", SAME), ("acc_norm", EITHER),
                 ("ACC", REFUSE), ("acc,acc", EITHER), ("arc=acc", EITHER), ("=acc", REFUSE), ("arc=", REFUSE)]:
        add(f"select --metric {v!r}", "select", sel("--metric", v), e, base="select", check=_select_whole)
    for v, e in [("", REFUSE), ("nope", REFUSE), ("none", SAME), ("None", REFUSE)]:
        add(f"select --filter {v!r}", "select", sel("--filter", v), e, base="select")
    for v, e in [("lm-eval", SAME), ("helm", REFUSE), ("csv", REFUSE), ("parquet", REFUSE), ("auto", SAME),
                 ("json", REFUSE), ("", REFUSE)]:
        add(f"select --format {v!r} on logs", "select", sel("--format", v), e, base="select")
    for v, e in [("csv", SAME), ("lm-eval", REFUSE), ("helm", REFUSE), ("parquet", REFUSE)]:
        add(f"select --format {v!r} on a table", "select",
            lambda ws, d, v=v: ["select", ws.root / "ref.csv", "--budget", 10, "--method", "random", "--format", v,
                                "--out", d / "out"], e, base="select-csv")
    for v in ["first", "last", "mean", "error", "bogus"]:
        add(f"select --duplicates {v}", "select", sel("--duplicates", v), REFUSE if v == "bogus" else SAME,
            base="select")
    add("select --out an existing file", "select",
        lambda ws, d: (d / "file").write_text("x") and ["select", ws.root / "ref", "--budget", 10, "--out", d / "file"],
        REFUSE)
    add("select --out under a file", "select",
        lambda ws, d: (d / "file").write_text("x") and ["select", ws.root / "ref", "--budget", 10, "--out",
                                                         d / "file" / "sub"], REFUSE)
    add("select --out ''", "select", lambda ws, d: ["select", ws.root / "ref", "--budget", 10, "--out", ""], REFUSE)
    add("select --out a selection already there", "select",
        lambda ws, d: shutil.copytree(ws.root / "sel", d / "out") and
        ["select", ws.root / "ref", "--budget", 10, "--out", d / "out"], REFUSE)
    add("select --force over a selection", "select",
        lambda ws, d: shutil.copytree(ws.root / "sel", d / "out") and
        ["select", ws.root / "ref", "--budget", 10, "--method", "random", "--force", "--out", d / "out"], SAME,
        base="select")
    # HELM's options on lm-eval logs: refused (one line) or without effect
    for opt, vals in (("--split", ["", "valid", "any", "test"]), ("--perturbation", ["typo", "{bad json", ""]),
                      ("--trials", ["mean", "separate", "0", "2"])):
        for v in vals:
            add(f"select {opt} {v!r} on logs", "select", sel(opt, v), EITHER, base="select", check=_select_whole)
    for v in ["-1", "abc", "1.5", "", "99999999999999999999"]:
        add(f"select --trials {v!r}", "select", sel("--trials", v), REFUSE)
    add("select REFERENCE ''", "select", lambda ws, d: ["select", "", "--budget", 10, "--out", d / "out"], REFUSE)
    add("select an unknown file type", "select",
        lambda ws, d: (d / "x.xlsx").write_bytes(b"PK\x03\x04") and ["select", d / "x.xlsx", "--budget", 10, "--out",
                                                                       d / "out"], REFUSE)
    add("select the wide table", "select",
        lambda ws, d: ["select", ws.root / "ref_wide.csv", "--budget", 10, "--method", "random", "--out", d / "out"],
        SAME, check=_select_whole)

    # estimate
    def est(*extra, sel="sel", new="new"):
        return lambda ws, d: ["estimate", ws.root / sel, ws.root / new, "--out", d / "out", *extra]

    for v, e in [(0, REFUSE), (1, REFUSE), (-0.5, REFUSE), ("nan", REFUSE), ("inf", REFUSE), (95, REFUSE),
                 ("x", REFUSE), ("", REFUSE), (0.5, SAME), ("0.95", SAME)]:
        add(f"estimate --confidence {v!r}", "estimate", est("--confidence", v), e, base="estimate")
    for v, e in [("items", SAME), ("tasks", EITHER), ("bogus", REFUSE), ("", REFUSE)]:
        add(f"estimate --weights {v!r}", "estimate", est("--weights", v), e, base="estimate", check=_estimate_any)
    for v, e in [("", EITHER), ("nope", REFUSE), ("arc,nope", REFUSE), ("arc,hs", SAME), ("arc", EITHER),
                 ("arc,arc", EITHER)]:
        add(f"estimate --tasks {v!r}", "estimate", est("--tasks", v), e, base="estimate",
            check=None if e == SAME else _estimate_tasks(v))
    for v, e in [("nope", REFUSE), ("acc_norm", REFUSE), ("acc", SAME), ("", REFUSE)]:
        add(f"estimate --metric {v!r}", "estimate", est("--metric", v), e, base="estimate")
    for v in ["first", "last", "mean", "error", "bogus"]:
        add(f"estimate --duplicates {v}", "estimate", est("--duplicates", v), REFUSE if v == "bogus" else SAME,
            base="estimate")
    add("estimate --reference the same logs", "estimate", lambda ws, d: est("--reference", ws.root / "ref")(ws, d),
        SAME, base="estimate")
    add("estimate --reference other data", "estimate", lambda ws, d: est("--reference", ws.root / "ref.csv")(ws, d),
        REFUSE)
    add("estimate --reference missing", "estimate", lambda ws, d: est("--reference", d / "nowhere")(ws, d), REFUSE)
    add("estimate DIR/manifest.json", "estimate",
        lambda ws, d: ["estimate", ws.root / "sel" / "manifest.json", ws.root / "new", "--out", d / "out"], SAME,
        base="estimate")
    add("estimate DIR missing", "estimate", lambda ws, d: ["estimate", d / "nowhere", ws.root / "new"], REFUSE)
    add("estimate DIR empty", "estimate",
        lambda ws, d: (d / "empty").mkdir() or ["estimate", d / "empty", ws.root / "new"], REFUSE)
    for label, text in [("not JSON", "{oops"), ("a list", "[1, 2]"), ("empty", ""), ("null", "null"),
                        ("another format", '{"format": "other"}'), ("binary", "\x00\x01")]:
        def bad_manifest(ws, d, text=text):
            m = shutil.copytree(ws.root / "sel", d / "sel")
            (m / "manifest.json").write_text(text)
            return ["estimate", m, ws.root / "new", "--out", d / "out"]
        add(f"estimate a manifest that is {label}", "estimate", bad_manifest, REFUSE)
    for key, value, e in [("items", None, REFUSE), ("items", [], REFUSE), ("items", ["arc/999"], REFUSE),
                          ("method", "bogus", REFUSE), ("budget", -1, EITHER), ("seed", "x", EITHER),
                          ("reference", None, REFUSE), ("tasks", None, EITHER)]:
        def field_manifest(ws, d, key=key, value=value):
            m = shutil.copytree(ws.root / "sel", d / "sel")
            doc = json.loads((m / "manifest.json").read_text())
            doc[key] = value
            (m / "manifest.json").write_text(json.dumps(doc))
            return ["estimate", m, ws.root / "new", "--out", d / "out"]
        add(f"estimate a manifest with {key}={value!r}", "estimate", field_manifest, e, base="estimate")
    add("estimate NEW_RESULTS the whole reference", "estimate", est(new="ref"), REFUSE)
    add("estimate NEW_RESULTS the selection folder", "estimate", est(new="sel"), REFUSE)
    add("estimate NEW_RESULTS missing", "estimate",
        lambda ws, d: ["estimate", ws.root / "sel", d / "nowhere", "--out", d / "out"], REFUSE)
    def other_items(ws, d):  # results on as many items, none of them chosen
        chosen = set(ws.items)
        ws.scores_of([i for i in ws.long["item"].unique() if i not in chosen][:len(ws.items)]).to_csv(
            d / "other.csv", index=False)
        return ["estimate", ws.root / "sel", d / "other.csv", "--out", d / "out"]
    add("estimate NEW_RESULTS of other items", "estimate", other_items, REFUSE)
    add("estimate a table against logs", "estimate",
        lambda ws, d: ws.scores_of(ws.items).to_csv(d / "new.csv", index=False) or
        ["estimate", ws.root / "sel", d / "new.csv", "--out", d / "out"], SAME, base="estimate",
        check=_same_estimate)
    def full_new(ws, d):
        from effstats.workflow import write_lm_eval_samples

        write_lm_eval_samples(ws.truth.subset(models=[N_REF]), d / "full", timestamp=TS)
        return d / "full"
    add("estimate --restrict-to-manifest on the whole benchmark's results", "estimate",
        lambda ws, d: ["estimate", ws.root / "sel", full_new(ws, d), "--restrict-to-manifest", "--out", d / "out"],
        SAME, base="estimate", check=_same_estimate)
    add("estimate the whole benchmark's results without --restrict-to-manifest", "estimate",
        lambda ws, d: ["estimate", ws.root / "sel", full_new(ws, d), "--out", d / "out"], REFUSE)
    add("estimate --restrict-to-manifest on the chosen items' results", "estimate",
        est("--restrict-to-manifest"), SAME, base="estimate")
    add("estimate --no-progress", "estimate", est("--no-progress"), SAME, base="estimate")
    add("estimate --force over its own report", "estimate",
        lambda ws, d: shutil.copytree(ws.root / "base" / "estimate", d / "out") and est("--force")(ws, d), SAME,
        base="estimate")
    add("estimate over its own report without --force", "estimate",
        lambda ws, d: shutil.copytree(ws.root / "base" / "estimate", d / "out") and est()(ws, d), EITHER,
        base="estimate")
    add("estimate --out an existing file", "estimate",
        lambda ws, d: (d / "f").write_text("x") and est()(ws, d)[:-2] + ["--out", d / "f"], REFUSE)

    # sequential start
    def start(*extra, src="ref"):
        return lambda ws, d: ["sequential", "start", ws.root / src, "--out", d / "out", *extra]

    std = ["--initial", 6, "--batch", 6]
    for v, e in [(0, REFUSE), (-1, REFUSE), ("nan", REFUSE), ("inf", REFUSE), (2, EITHER), ("x", REFUSE),
                 (0.3, EITHER), (0.05, SAME)]:
        add(f"start --half-width {v!r}", "start", start("--half-width", v, *std), e, base="start",
            check=_started if e == EITHER else None)
    for v, e in [("nope", REFUSE), ("", REFUSE), ("org/m00", EITHER), (NEW, REFUSE)]:
        add(f"start --against {v!r}", "start", start("--against", v, *std), e, check=_started)
    for v, e in [(0, REFUSE), (-1, REFUSE), ("nan", REFUSE), ("inf", REFUSE), (0.5, EITHER)]:
        add(f"start --target-se {v!r}", "start", start("--target-se", v), e, check=_started)
    add("start --rule adaptive --against", "start", start("--rule", "adaptive", "--against", "org/m00"), REFUSE)
    add("start --rule efficacy --half-width", "start", start("--rule", "efficacy", "--half-width", 0.05), REFUSE)
    add("start --rule precision without --half-width", "start", start("--rule", "precision", *std), EITHER,
        check=_started)
    add("start without a rule", "start", start(*std), REFUSE)
    for v, e in [(0, REFUSE), (1, REFUSE), (-1, REFUSE), ("nan", REFUSE), (2, REFUSE), (0.1, EITHER)]:
        add(f"start --alpha {v!r}", "start", start("--half-width", 0.05, "--alpha", v, *std), e, check=_started)
    for v in ["ld_pocock", "ld_obf", "hsd", "power", "bogus"]:
        add(f"start --spending {v}", "start", start("--half-width", 0.05, "--spending", v, *std),
            REFUSE if v == "bogus" else EITHER, check=_started)
    for opt in ["--initial", "--batch", "--max-n"]:
        for v, e in [(0, REFUSE), (-1, REFUSE), (10**9, EITHER), ("x", REFUSE), (1, EITHER), (10**30, EITHER)]:
            rest = {"--initial": ["--batch", 6], "--batch": ["--initial", 6]}.get(opt, std)
            add(f"start {opt} {v!r}", "start", start("--half-width", 0.05, opt, v, *rest), e, check=_started)
    add("start --seed -1", "start", start("--half-width", 0.05, "--seed", -1, *std), REFUSE)
    add("start --alternative greater with --half-width", "start",
        start("--half-width", 0.05, "--alternative", "greater", *std), EITHER, check=_started)
    add("start --out a run already there", "start",
        lambda ws, d: shutil.copytree(ws.root / "seq", d / "out") and start("--half-width", 0.05, *std)(ws, d), REFUSE)
    add("start REFERENCE missing", "start", lambda ws, d: ["sequential", "start", d / "x", "--half-width", 0.05,
                                                           "--out", d / "out"], REFUSE)
    add("start --metric nope", "start", start("--half-width", 0.05, "--metric", "nope", *std), REFUSE)
    add("start --filter nope", "start", start("--half-width", 0.05, "--filter", "nope", *std), REFUSE)
    add("start --format csv on logs", "start", start("--half-width", 0.05, "--format", "csv", *std), REFUSE)

    # sequential update
    def upd(*extra, seq="seq", new="b1"):
        def f(ws, d):
            run = shutil.copytree(ws.root / seq, d / seq)
            return ["sequential", "update", run, ws.root / new, *extra]
        return f
    add("update DIR/state.json", "update",
        lambda ws, d: ["sequential", "update", shutil.copytree(ws.root / "seq", d / "seq") / "state.json",
                       ws.root / "b1"], SAME, base="update")
    add("update DIR missing", "update", lambda ws, d: ["sequential", "update", d / "nowhere", ws.root / "b1"], REFUSE)
    add("update DIR a selection", "update", lambda ws, d: ["sequential", "update", shutil.copytree(
        ws.root / "sel", d / "sel"), ws.root / "b1"], REFUSE)
    for label, text in [("not JSON", "{oops"), ("a list", "[]"), ("empty", ""), ("null", "null"),
                        ("another format", '{"format": "x"}')]:
        def bad_state(ws, d, text=text):
            run = shutil.copytree(ws.root / "seq", d / "seq")
            (run / "state.json").write_text(text)
            return ["sequential", "update", run, ws.root / "b1"]
        add(f"update a state that is {label}", "update", bad_state, REFUSE)
    for key, value in [("looks", None), ("order", None), ("order", []), ("rule", {"kind": "bogus"}),
                       ("alpha", 2), ("batch", 0), ("status", "bogus")]:
        def field_state(ws, d, key=key, value=value):
            run = shutil.copytree(ws.root / "seq", d / "seq")
            doc = json.loads((run / "state.json").read_text())
            doc[key] = value
            (run / "state.json").write_text(json.dumps(doc))
            return ["sequential", "update", run, ws.root / "b1"]
        add(f"update a state with {key}={value!r}", "update", field_state, REFUSE)
    for v, e in [("nope", REFUSE), ("", REFUSE), (NEW, SAME)]:
        add(f"update --model {v!r}", "update", upd("--model", v), e, base="update")
    for v, e in [("nope", REFUSE), ("acc", SAME)]:
        add(f"update --metric {v!r}", "update", upd("--metric", v), e, base="update")
    add("update NEW_RESULTS of another batch", "update", upd(new="new"), REFUSE)
    add("update NEW_RESULTS the reference", "update", upd(new="ref"), REFUSE)
    add("update the same batch twice", "update",
        lambda ws, d: (lambda argv: (_run_main([str(a) for a in argv]), argv)[1])(upd()(ws, d)), REFUSE)
    add("update a table against logs", "update",
        lambda ws, d: ws.scores_of(ws.batch).to_csv(d / "b1.csv", index=False) or
        ["sequential", "update", shutil.copytree(ws.root / "seq", d / "seq"), d / "b1.csv"], SAME, base="update")

    # audit
    def aud(*extra, scores="board.csv"):
        return lambda ws, d: ["audit", ws.root / scores, "--out", d / "out", "--n-boot", 20, "--no-progress", *extra]

    for v, e in [("table", SAME), ("helm-json", REFUSE), ("openllm-json", REFUSE), ("openllm-csv", EITHER),
                 ("bogus", REFUSE)]:
        add(f"audit --format {v}", "audit", aud("--format", v), e, base="audit", check=_audit_any if e == EITHER
            else None)
    for opt in ["--by", "--model", "--item", "--score"]:
        add(f"audit {opt} nope", "audit", aud(opt, "nope"), REFUSE)
    add("audit --table on a CSV", "audit", aud("--table", "x"), EITHER, check=_audit_any)
    for v, e in [("nope", REFUSE), ("A", REFUSE), ("A,B", EITHER), ("", EITHER), ("A,A", EITHER)]:
        add(f"audit --scenarios {v!r}", "audit", aud("--scenarios", v), e, check=_audit_any)
    for v, e in [("A", EITHER), ("nope", REFUSE), ("A,B,C,D", REFUSE), ("A,B,C,D,E", REFUSE)]:
        add(f"audit --exclude {v!r}", "audit", aud("--exclude", v), e, check=_audit_any)
    for v in ["last", "first", "mean", "error", "bogus"]:
        add(f"audit --duplicates {v}", "audit", aud("--duplicates", v), REFUSE if v == "bogus" else SAME,
            base="audit")
    for v in ["auto", "mwr", "mean", "mean-of-means", "bogus"]:
        add(f"audit --aggregate {v}", "audit", aud("--aggregate", v), REFUSE if v == "bogus" else EITHER,
            check=_audit_any)
    for v in ["auto", "strict", "half", "bogus"]:
        add(f"audit --ties {v}", "audit", aud("--ties", v), REFUSE if v == "bogus" else EITHER, check=_audit_any)
    for v, e in [(0, REFUSE), (-1, REFUSE), ("x", REFUSE), (1, EITHER)]:
        add(f"audit --n-boot {v!r}", "audit", lambda ws, d, v=v: ["audit", ws.root / "board.csv", "--out", d / "out",
                                                                   "--no-progress", "--n-boot", v], e,
            check=_audit_any)
    for v, e in [(0, REFUSE), (1, REFUSE), ("nan", REFUSE), (-1, REFUSE), (0.5, EITHER)]:
        add(f"audit --target {v!r}", "audit", aud("--target", v), e, check=_audit_any)
    add("audit --seed -1", "audit", aud("--seed", -1), REFUSE)
    add("audit --out an existing file", "audit",
        lambda ws, d: (d / "f").write_text("x") and ["audit", ws.root / "board.csv", "--out", d / "f", "--n-boot", 20,
                                                     "--no-progress"], REFUSE)

    # the program itself
    for argv, e in [([], REFUSE), (["bogus"], REFUSE), (["select"], REFUSE), (["estimate"], REFUSE),
                    (["sequential"], REFUSE), (["sequential", "bogus"], REFUSE), (["audit"], REFUSE),
                    (["select", "--budget"], REFUSE), (["--version"], EITHER)]:
        add(f"effstats {' '.join(argv) or '(nothing)'}", "effstats", lambda ws, d, argv=argv: list(argv), e,
            check=lambda ws, d, out: None)
    return out


def _audit_table_cases() -> list[Case]:
    out = []

    def add(label, spoil, expect, check=None):
        def build(ws, d, spoil=spoil):
            p = d / "board.csv"
            ws.board.to_csv(p)
            new = spoil(p, ws.board.copy())
            argv = ["audit", new if isinstance(new, Path) else p, "--out", d / "out", "--n-boot", 20, "--no-progress"]
            _ARGV[d] = argv
            return argv
        out.append(Case(f"audit: {label}", "audit", build, expect, base="audit", check=check, tags=("audit",)))

    def write(t, p, **kw):
        t.to_csv(p, **kw)

    add("empty file", lambda p, t: p.write_text(""), REFUSE)
    add("header only", lambda p, t: p.write_text("model,A,B,C\n"), REFUSE)
    add("one model", lambda p, t: write(t.iloc[:1], p), REFUSE)
    add("one scenario", lambda p, t: write(t[["A"]], p), REFUSE)
    add("binary junk", lambda p, t: p.write_bytes(bytes(range(256)) * 4), REFUSE)
    add("UTF-8 byte order mark", lambda p, t: p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes()), SAME)
    add("CRLF line endings", lambda p, t: p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n")), SAME)
    add("semicolons", lambda p, t: write(t, p, sep=";"), SAME)
    add("semicolons and decimal commas", lambda p, t: write(t, p, sep=";", decimal=","), SAME)
    add("tab separated .tsv", lambda p, t: write(t, p.with_suffix(".tsv"), sep="\t") or p.with_suffix(".tsv"), SAME)
    add("percentages", lambda p, t: write((t * 100).round(1).astype(str) + "%", p), SAME)
    add("a column in percent", lambda p, t: write(t.assign(A=t["A"] * 100), p), EITHER, _audit_any)
    add("a '-' cell", lambda p, t: write(t.astype(object).where(~_one_cell(t), "-"), p), EITHER, _audit_any)
    add("a NaN cell", lambda p, t: write(t.where(~_one_cell(t)), p), EITHER, _audit_any)
    add("an inf cell", lambda p, t: write(t.astype(object).where(~_one_cell(t), "inf"), p), REFUSE)
    add("a 1e308 cell", lambda p, t: (t.__setitem__("A", t["A"].astype(float).where(t.index != "model-c", 1e308)),
                                      write(t, p)) and None, EITHER, _audit_any)
    add("a text cell", lambda p, t: write(t.astype(object).where(~_one_cell(t), "abc"), p), EITHER, _audit_any)
    add("a negative score", lambda p, t: write(t.assign(B=-t["B"]), p), EITHER, _audit_any)
    add("a model twice", lambda p, t: write(pd.concat([t, t.iloc[[3]]]), p), SAME)
    add("duplicated column names", lambda p, t: p.write_text(p.read_text().replace("model,A,B", "model,A,A", 1)),
        REFUSE)
    add("an empty model name", lambda p, t: write(t.rename(index={"model-c": ""}), p), REFUSE)
    add("every score equal", lambda p, t: write(t * 0 + 0.5, p), EITHER, _audit_ties)
    add("a unicode model name", lambda p, t: write(t.rename(index={"model-c": "模型-ç"}), p), EITHER, _audit_any)
    add("a rank column", lambda p, t: write(t.assign(Rank=np.arange(1, 9)), p), SAME)
    add("a parameters column", lambda p, t: write(t.assign(**{"#Params (B)": [7, 13, 70, 7, 8, 3, 1, 2]}), p), SAME)
    add("a published average", lambda p, t: write(t.assign(Average=t.mean(axis=1).round(3)), p), EITHER, _audit_any)
    add("a JSON file of junk", lambda p, t: p.with_suffix(".json").write_text("{oops") and p.with_suffix(".json"),
        REFUSE)
    add("a JSON list of numbers", lambda p, t: p.with_suffix(".json").write_text("[1, 2]") and p.with_suffix(".json"),
        REFUSE)
    add("an empty folder", lambda p, t: (p.parent / "folder").mkdir() or p.parent / "folder", REFUSE)
    add("a missing path", lambda p, t: p.with_name("nowhere.csv"), REFUSE)
    add("a long table", lambda p, t: t.reset_index().melt(id_vars="model", var_name="scenario",
                                                          value_name="score").to_csv(p, index=False), SAME)
    return out


def _one_cell(t: pd.DataFrame) -> np.ndarray:
    mask = np.zeros(t.shape, bool)
    mask[2, 1] = True
    return mask


def _select_whole(ws: Workspace, d: Path, out: str) -> str | None:
    got = ws.result("select", out, d / "out")
    want = ws.base["select"]
    if (got["n_items"], got["n_models"]) != (want["n_items"], want["n_models"]):
        return (f"read {got['n_models']} models x {got['n_items']} items, expected {want['n_models']} x "
                f"{want['n_items']}")
    if not set(got["items"]) <= set(ws.truth.item_ids):
        return f"chose items outside the benchmark: {sorted(set(got['items']) - set(ws.truth.item_ids))[:3]}"
    return None


def _select_tasks(v: str):
    def check(ws: Workspace, d: Path, out: str) -> str | None:
        got = ws.result("select", out, d / "out")
        wanted = {t.strip() for t in v.split(",") if t.strip()} or set(TASKS)
        tasks = {i.split("/")[0] for i in got["items"]}
        return None if tasks <= wanted else f"chose items of tasks {sorted(tasks)}, asked for {sorted(wanted)}"
    return check


def _estimate_any(ws: Workspace, d: Path, out: str) -> str | None:
    got = ws.result("estimate", out, d / "out")
    e = got["estimate"][0]
    return None if 0 <= e <= 1 else f"estimate {e} outside [0, 1]"


def _same_estimate(ws: Workspace, d: Path, out: str) -> str | None:
    """The clean input's estimate and rank, whatever the new model is called."""
    got, want = ws.result("estimate", out, d / "out"), ws.base["estimate"]
    same = got["estimate"] == want["estimate"] and got["rank"] == want["rank"]
    return None if same else f"result {got} differs from the clean input's {want}"


def _estimate_tasks(v: str):
    def check(ws: Workspace, d: Path, out: str) -> str | None:
        got = ws.result("estimate", out, d / "out")
        wanted = [t.strip() for t in v.split(",") if t.strip()] or list(TASKS)
        items = [i for i in ws.items if i.split("/")[0] in wanted]
        sc = ws.scores_of(items)
        mean = ws.weighted_mean(sc) if len(wanted) > 1 else float(sc["score"].mean())
        return None if abs(got["estimate"][0] - mean) < 1e-9 else f"estimate {got['estimate'][0]}, expected {mean}"
    return check


def _started(ws: Workspace, d: Path, out: str) -> str | None:
    doc = json.loads((d / "out" / "state.json").read_text())
    order = doc.get("order") or []
    if not set(order) <= set(ws.truth.item_ids) or len(set(order)) != len(order):
        return "the item order holds unknown or repeated items"
    batch = pd.read_csv(d / "out" / "batch_001" / "items.csv")["item"].tolist()
    return None if batch and set(batch) <= set(order) else "the first batch is empty or not in the order"


def _audit_any(ws: Workspace, d: Path, out: str) -> str | None:
    scores = pd.read_csv(d / "out" / "scores.csv")
    return None if len(scores) >= 2 and (d / "out" / "report.md").is_file() else "no report"


def _audit_ties(ws: Workspace, d: Path, out: str) -> str | None:
    report = (d / "out" / "report.md").read_text()
    return None if "every model ties" in report else "every model ties, and the report does not say so"


def cases() -> list[Case]:
    """Every case of the campaign, in a fixed order."""
    out = _record_cases() + _file_cases() + _csv_cases() + _option_cases() + _audit_table_cases()
    names = [c.name for c in out]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"case names given twice: {sorted(dup)[:5]}"
    return out


def fast_slice(all_cases: list[Case], every: int = 9) -> list[Case]:
    """About one case in ``every`` of each command, spread over the kinds of input (the order of :func:`cases`)."""
    seen: dict[str, int] = {}
    out = []
    for c in all_cases:
        k = seen[c.command] = seen.get(c.command, -1) + 1
        if k % every == 0:
            out.append(c)
    return out


def campaign(ws: Workspace, chosen: list[Case], tmp: Path, progress: bool = False) -> list[Outcome]:
    out = []
    for i, c in enumerate(chosen):
        d = Path(tmp) / f"case{i:04d}"
        o = run_case(ws, c, d)
        out.append(o)
        if progress and o.status in BAD + ("refused",):
            print(" ", o.line(), flush=True)
        shutil.rmtree(d, ignore_errors=True)
    return out
