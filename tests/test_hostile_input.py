"""Names from the user's data are inert: every report writer escapes them, CSV cells are no formulas, files stay
inside their folder, and only regular files are read.

Model, task and item names here carry HTML (``<img onerror>``, ``<script>``, ``<a href>``), Markdown links, table
breakers (``|``, newlines) and spreadsheet formulas (``=HYPERLINK``, ``=cmd|…``, ``@``, ``+``, ``-``); every
HTML, Markdown and CSV file the command line writes is checked for them.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats._escape import csv_cell, csv_safe, html_text, line_text, md_text
from effstats.cli import main
from effstats.datasets import read_lm_eval_samples, simulate_responses
from effstats.workflow import Selection, SequentialRun, estimate, read_results, write_lm_eval_samples

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
LINK = '<a href="http://evil">x</a>'
MD_LINK = "[click](javascript:alert(1))"
FORMULAS = ['=HYPERLINK("http://evil","x")', "=cmd|' /C calc'!A0", "@SUM(A1)", "+1+2", "-2+3", "\tx", "\ry"]
NEW = "new <b>bold</b> | pipe\nnewline"
MODELS = [IMG, SCRIPT, LINK, MD_LINK, "a|b\nc"] + FORMULAS + [f"ref{i}" for i in range(10)]
TASKS = [IMG, "t|2", "=HYPERLINK(\"x\")"]
RAW_MARKUP = ("<img src=x", "<script", "<a href", "<b>bold", "](javascript:")  # the last is a Markdown link


def _truth() -> ResponseMatrix:
    n = 120
    d = simulate_responses(len(MODELS) + 1, n * len(TASKS), rng=5)
    return ResponseMatrix(d.values, model_ids=MODELS + [NEW], item_ids=[f"{t}/{k}" for t in TASKS for k in range(n)])


def _cells(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def _no_formula(path: Path) -> None:
    for row in _cells(path):
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(cell)  # only a number may start so (a negative number stays a number)


def _md_tables_hold(md: str) -> None:
    """Every table row has as many cell separators (unescaped |) as its header."""
    width = None
    for line in md.splitlines():
        if line.startswith("|"):
            n = len(re.findall(r"(?<!\\)\|", line))
            width = n if width is None else width
            assert n == width, line
        else:
            width = None


def _inert(text: str, kind: str) -> None:
    """No markup from a name: in HTML no tag or link of theirs, in Markdown none unescaped, and tables whole."""
    for raw in RAW_MARKUP[:-1] if kind == "html" else RAW_MARKUP:
        pattern = re.escape(raw) if kind == "html" else "".join(
            r"(?<!\\)" + re.escape(c) if c in "<>[]()|" else re.escape(c) for c in raw)
        assert not re.search(pattern, text), (kind, raw)
    if kind == "md":
        _md_tables_hold(text)


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    truth = _truth()
    truth.subset(models=MODELS).to_long().to_csv(root / "ref.csv", index=False)
    return root, truth


def _results(truth: ResponseMatrix, items, path: Path) -> Path:
    """The new model's results on ``items`` as a long CSV (item ids keep their names, as in lm-eval's files they
    cannot)."""
    truth.subset(models=[NEW], items=list(items)).to_long().to_csv(path, index=False)
    return path


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_reports_escape_every_name(loop, capsys, tmp_path):
    root, truth = loop
    sel = tmp_path / "sel"
    code, _, err = _run(["select", root / "ref.csv", "--budget", 60, "--out", sel], capsys)
    assert code == 0, err
    chosen = Selection.load(sel).items
    # the new model's results on two of the three tasks: the report names the task left out
    keep = [i for i in chosen if not i.startswith("t|2/")]
    code, out, err = _run(["estimate", sel, _results(truth, keep, tmp_path / "new.csv"),
                           "--tasks", f"{IMG},=HYPERLINK(\"x\")",
                           "--out", tmp_path / "e"], capsys)
    assert code == 0, err
    html = (tmp_path / "e" / "estimate.html").read_text()
    md = (tmp_path / "e" / "estimate.md").read_text()
    _inert(html, "html")
    _inert(md, "md")
    assert "left out: t|2" in html and html_text(IMG) in html  # said, as text
    assert md_text(NEW) in md and md_text(IMG) in md and "left out: t\\|2" in md
    # the terminal's report is text: the names as they are, their line breaks as escapes
    assert "left out: t|2" in out and f"| {line_text(NEW)} |" in out and f"({line_text(IMG)}, " in out, out
    for name in ("estimate.csv", "tasks.csv"):
        _no_formula(tmp_path / "e" / name)
    tasks = pd.read_csv(tmp_path / "e" / "tasks.csv")
    assert "'=HYPERLINK(\"x\")" in set(tasks["task"]) and (tasks["estimate"].between(0, 1)).all()
    # the notebook views too
    sel_obj = Selection.load(sel)
    _inert(sel_obj._repr_html_(), "html")
    est = estimate(sel_obj, tmp_path / "new.csv", reference=root / "ref.csv", tasks=[IMG, '=HYPERLINK("x")'])
    _inert(est._repr_html_(), "html")
    _inert(est.to_markdown(), "md")


def test_sequential_decision_escapes_the_names(loop, capsys, tmp_path):
    root, truth = loop
    seq = tmp_path / "seq"
    code, _, err = _run(["sequential", "start", root / "ref.csv", "--against", MODELS[2], "--initial", 200, "--batch",
                         160, "--out", seq], capsys)
    assert code == 0, err
    run = SequentialRun.load(seq)
    k = 0
    while not run.stopped:
        code, out, err = _run(["sequential", "update", seq, _results(truth, run.next_items, tmp_path / f"b{k}.csv")],
                              capsys)
        assert code == 0, err
        run, k = SequentialRun.load(seq), k + 1
    md = (seq / "decision.md").read_text()
    _inert(md, "md")
    assert md.startswith(f"# Sequential evaluation: {md_text(NEW)} against {md_text(LINK)}")
    # the decision printed at the stop is text: the names as they are (no Markdown escapes), their line breaks and
    # control characters as escapes
    assert out.startswith(f"# Sequential evaluation: {line_text(NEW)} against {line_text(LINK)} ("), out
    assert "\\|" not in out and "\\<" not in out and "Decision: **" in out, out
    _no_formula(seq / "looks.csv")
    for f in seq.glob("batch_*/items.csv"):
        _no_formula(f)



def test_a_sequential_batch_lists_its_exact_ids_to_join_results_on(loop, capsys, tmp_path):
    """items.csv guards its cells against spreadsheets (``'=HYPERLINK...``); items.json holds the ids as they are,
    and results joined on it are the batch's: the update takes them."""
    root, truth = loop
    seq = tmp_path / "seq"
    code, _, err = _run(["sequential", "start", root / "ref.csv", "--half-width", 0.05, "--initial", 120, "--batch", 60,
                         "--seed", 3, "--out", seq], capsys)
    assert code == 0, err
    for k in (1, 2):
        run = SequentialRun.load(seq)
        exact = json.loads((seq / f"batch_{k:03d}" / "items.json").read_text(encoding="utf-8"))
        shown = pd.read_csv(seq / f"batch_{k:03d}" / "items.csv", dtype=str, keep_default_na=False)["item"].tolist()
        assert exact == run.next_items.tolist() and len(exact) == (120 if k == 1 else 60)
        formulas = [i for i in exact if i.startswith("=")]
        assert formulas and all("'" + i in shown and i not in shown for i in formulas)
        # the harness's results, joined on the exact list
        joined = truth.to_long().merge(pd.DataFrame({"item": exact}), on="item")
        joined[joined["model"] == NEW].to_csv(tmp_path / f"b{k}.csv", index=False)
        code, _, err = _run(["sequential", "update", seq, tmp_path / f"b{k}.csv"], capsys)
        assert code == 0, err
        assert SequentialRun.load(seq).n_evaluated == len(exact) + (120 if k == 2 else 0)


def test_audit_report_escapes_every_name(tmp_path):
    rng = np.random.default_rng(0)
    names = MODELS[:12]
    scen = [IMG, SCRIPT, "s|3", "=1+1", MD_LINK, "ok"]
    x = np.clip(np.linspace(0.3, 0.8, len(names))[:, None] + rng.normal(0, 0.08, (len(names), len(scen))), 0, 1)
    df = pd.DataFrame(x.round(3), index=pd.Index(names, name="model"), columns=scen)
    df.to_csv(tmp_path / "board.csv")
    out = tmp_path / "rep"
    assert main(["audit", str(tmp_path / "board.csv"), "--out", str(out), "--n-boot", "50", "--no-progress"]) == 0
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    _inert(md, "md")
    _inert(html, "html")
    assert html_text(IMG) in html and "\\<script\\>" in md
    for f in out.glob("*.csv"):
        _no_formula(f)
    scores = pd.read_csv(out / "scores.csv")
    assert len(scores) == len(names) and pd.api.types.is_float_dtype(scores["mwr"])


def test_csv_cells_neutralised_and_numbers_kept():
    df = pd.DataFrame({"name": FORMULAS + ["-0.5", "plain", "1e-3"], "x": np.linspace(-1, 1, len(FORMULAS) + 3)},
                      index=pd.Index(["=a"] + ["b"] * (len(FORMULAS) + 2), name="model"))
    text = csv_safe(df).to_csv()
    back = pd.read_csv(io.StringIO(text), index_col=0, keep_default_na=False)
    assert back["x"].tolist() == pytest.approx(df["x"].tolist())  # numbers stay numbers, negative ones too
    assert back.index[0] == "'=a"
    assert back["name"].tolist()[: len(FORMULAS)] == ["'" + f.replace("\r", "\\x0d") for f in FORMULAS]
    assert back["name"].tolist()[len(FORMULAS):] == ["-0.5", "plain", "1e-3"]
    assert csv_cell(-3) == -3 and csv_cell("-3.5e2") == "-3.5e2" and csv_cell("-x") == "'-x"


def test_markdown_and_html_helpers():
    assert md_text("a|b\nc") == "a\\|b\\nc"
    assert md_text(SCRIPT) == "\\<script\\>alert(1)\\</script\\>"
    assert md_text(MD_LINK) == "\\[click\\](javascript:alert(1))"
    assert md_text("Sort & Search, arc_easy") == "Sort & Search, arc_easy"  # plain names stay readable
    assert html_text(IMG) == "&lt;img src=x onerror=alert(1)&gt;"


# ---------------------------------------------------------------------------------------------- paths
@pytest.mark.parametrize("model", ["..", ".", "/abs/path", "a/../../b", "nul\0x", "x" * 400, "../../etc"],
                         ids=["dotdot", "dot", "absolute", "traversal", "nul", "long", "up-etc"])
def test_lm_eval_writer_keeps_every_path_inside(tmp_path, model):
    out = tmp_path / "deep" / "out"
    items = ["../../up/1", "a/b/../../c/2", "t\0/3", "/abs/4", "y" * 300 + "/5"]
    rm = ResponseMatrix([[1, 0, 1, 1, 0], [0, 1, 1, 0, 1]], model_ids=[model, "other"], item_ids=items)
    write_lm_eval_samples(rm, out)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(out in p.parents for p in written)
    assert all(len(p.name.encode()) <= 255 for p in written)
    back = read_lm_eval_samples(out)
    assert back.n_models == 2 and back.n_items == 5
    assert model in set(back.model_ids)  # the model's name is kept in its results file
    assert sorted(back.to_frame().sum(axis=1).astype(int).tolist()) == [3, 3]  # every cell written and read back


def test_lm_eval_writer_keeps_task_names_that_are_file_names(tmp_path):
    # only separators and control characters change: a task such as "rotate_+30" reads back as itself
    tasks = ["rotate_+30", "gauss_0.35", "a b=c,d", "<img src=x>", "é~!"]
    rm = ResponseMatrix([[1, 0, 1, 1, 0]], model_ids=["m"], item_ids=[f"{t}/{i}" for i, t in enumerate(tasks)])
    back = read_lm_eval_samples(write_lm_eval_samples(rm, tmp_path))
    assert sorted(back.item_ids) == sorted(rm.item_ids)
    assert back.to_frame().loc["m", list(rm.item_ids)].astype(int).tolist() == [1, 0, 1, 1, 0]


def test_lm_eval_writer_refuses_a_file_as_its_folder(tmp_path):
    (tmp_path / "f").write_text("mine")
    rm = ResponseMatrix([[1]], model_ids=["m"], item_ids=["t/0"])
    with pytest.raises(ValueError, match="directory: .* exists and is not a folder"):
        write_lm_eval_samples(rm, tmp_path / "f")
    assert (tmp_path / "f").read_text() == "mine"


def test_lm_eval_writer_refuses_names_that_share_a_file(tmp_path):
    rm = ResponseMatrix([[1], [0]], model_ids=["org/a", "org__a"], item_ids=["t/0"])
    with pytest.raises(ValueError, match="'org/a' and 'org__a' would be written to one file name"):
        write_lm_eval_samples(rm, tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("ids, match", [
    (["arc/01", "arc/1", "arc/2"],
     r"^responses: items 'arc/01' and 'arc/1' are one document of task 'arc' \(doc_id 1\)"),
    (["arc/01", "arc/2", "arc/3"], r"^responses: item 'arc/01' is written as doc_id 1 and read back as 'arc/1'"),
    (["arc/99999999999999999999", "arc/1", "arc/2"],
     r"^responses: item 'arc/99999999999999999999' names no lm-eval document"),
])
def test_lm_eval_writer_refuses_items_it_would_write_as_another_document(tmp_path, ids, match):
    rm = ResponseMatrix([[1, 0, 1], [0, 0, 1]], model_ids=["a", "b"], item_ids=ids)
    with pytest.raises(ValueError, match=match):
        write_lm_eval_samples(rm, tmp_path)
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------------------------------- regular files
def _ref_logs(root: Path) -> Path:
    d = simulate_responses(12, 60, rng=2)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(12)], item_ids=[f"t/{k}" for k in range(60)])
    return write_lm_eval_samples(rm, root / "ref")


def test_only_regular_files_are_read(tmp_path, capsys):
    ref = _ref_logs(tmp_path)
    os.mkfifo(ref / "m0" / "samples_t_2026-02-01T00-00-00.000000.jsonl")  # a FIFO named like a log
    (ref / "m1" / "samples_x_2026-01-01T00-00-00.000000.jsonl").mkdir()  # a folder named like one
    loop = ref / "m2" / "samples_loop_2026-01-01T00-00-00.000000.jsonl"
    loop.symlink_to(loop)  # a link to itself
    (ref / "m3" / "samples_gone_2026-01-01T00-00-00.000000.jsonl").symlink_to(tmp_path / "nowhere")
    cmd = [sys.executable, "-m", "effstats", "select", str(ref), "--budget", "20", "--out", str(tmp_path / "sel")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # a FIFO read would never return
    assert p.returncode == 0, p.stderr
    warning = [ln for ln in p.stderr.splitlines() if "not regular files" in ln]
    assert len(warning) == 1 and "warning: REFERENCE: left out 4 path(s)" in warning[0]
    for name in ("m0/samples_t_", "m1/samples_x_", "m2/samples_loop_", "m3/samples_gone_"):
        assert name in warning[0]
    assert Selection.load(tmp_path / "sel").reference["n_models"] == 12


def test_a_refusal_names_the_new_results_logs_left_out_as_not_regular_files(tmp_path, capsys):
    d = simulate_responses(13, 60, rng=2)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(13)],
                        item_ids=[f"{'tu'[k // 30]}/{k}" for k in range(60)])
    ref = write_lm_eval_samples(rm.subset(models=range(12)), tmp_path / "ref")
    assert _run(["select", ref, "--budget", 20, "--out", tmp_path / "sel"], capsys)[0] == 0
    logs = write_lm_eval_samples(rm.subset(models=[12], items=Selection.load(tmp_path / "sel").items),
                                 tmp_path / "new")
    (log,) = logs.rglob("samples_t_*.jsonl")
    log.unlink()
    os.mkfifo(log)  # the task's only log: its results are not read
    code, _, err = _run(["estimate", tmp_path / "sel", logs, "--out", tmp_path / "est"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "no result on any chosen item of the task(s) 't'" in err, err
    assert err.strip().endswith("(NEW_RESULTS: left out 1 path(s) named like logs that are not regular files (a "
                                f"folder, a FIFO, a device or a broken link): m12/{log.name})"), err


@pytest.mark.parametrize("kind", ["fifo", "loop"])
def test_a_results_path_that_is_no_regular_file_is_refused(tmp_path, capsys, kind):
    ref = _ref_logs(tmp_path)
    assert _run(["select", ref, "--budget", 20, "--out", tmp_path / "sel"], capsys)[0] == 0
    bad = tmp_path / "new.csv"
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to(bad)
    cmd = [sys.executable, "-m", "effstats", "estimate", str(tmp_path / "sel"), str(bad)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert ("not a regular file" if kind == "fifo" else "link loop") in p.stderr
    with pytest.raises(ValueError, match="new_results: "):
        read_results(bad, name="new_results")
    p = subprocess.run([sys.executable, "-m", "effstats", "audit", str(bad), "--out", str(tmp_path / "a")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr


# ---------------------------------------------------------------------------------------------- the terminal
def test_names_printed_to_the_terminal_carry_no_control_sequences(tmp_path, capsys):
    d = simulate_responses(13, 90, rng=3)
    tasks = ["clear\x1b[2J", "title\x1b]0;pwned\x07", "rtl\u202eevil"]
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}\x1b[31m" for i in range(13)],
                        item_ids=[f"{tasks[k % 3]}/{k}" for k in range(90)])
    rm.subset(models=range(12)).to_long().to_csv(tmp_path / "ref.csv", index=False)
    code, out, err = _run(["select", tmp_path / "ref.csv", "--budget", 15, "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    assert "clear\\x1b[2J" in out and "rtl\\u202eevil" in out  # shown, as escapes
    chosen = Selection.load(tmp_path / "sel").items
    rm.subset(models=[12], items=list(chosen)).to_long().to_csv(tmp_path / "new.csv", index=False)
    code, out2, err2 = _run(["estimate", tmp_path / "sel", tmp_path / "new.csv"], capsys)
    assert code == 0, err2
    code, _, err3 = _run(["estimate", tmp_path / "sel", tmp_path / "ref.csv"], capsys)  # refused, naming ids
    assert code == 2
    for text in (out, err, out2, err2, err3):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)
    assert "m12\\x1b[31m" in out2  # the name as plain text (the terminal's report is not Markdown), its control
    # character as an escape
    assert "m12\\x1b\\[31m" in (tmp_path / "sel" / "estimate" / "new" / "estimate.md").read_text()  # Markdown-escaped


def test_printed_commands_are_shell_quoted(tmp_path, capsys):
    import shlex

    task = "x;touch PWNED $(id)"
    d = simulate_responses(13, 60, rng=3)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(13)], item_ids=[f"{task}/{k}" for k in range(60)])
    rm.subset(models=range(12)).to_long().to_csv(tmp_path / "ref.csv", index=False)
    out_dir = tmp_path / "my dir;$(id)"
    code, out, err = _run(["select", tmp_path / "ref.csv", "--budget", 15, "--out", out_dir], capsys)
    assert code == 0, err
    words = shlex.split(next(ln for ln in out.splitlines() if ln.strip().startswith("lm_eval ")))
    assert words[words.index("--tasks") + 1] == task
    assert words[words.index("--samples") + 1] == str(out_dir / "lm_eval_samples.json")
    then = shlex.split(next(ln for ln in out.splitlines() if ln.strip().startswith("effstats ")))
    assert then == ["effstats", "estimate", str(out_dir), "<RESULTS.csv>"]
    seq = tmp_path / "seq;$(id) x"
    code, out, err = _run(["sequential", "start", tmp_path / "ref.csv", "--half-width", 0.1, "--initial", 20, "--batch",
                           20,
                           "--out", seq], capsys)
    assert code == 0, err
    then = shlex.split(next(ln for ln in out.splitlines() if ln.strip().startswith("effstats ")))
    assert then == ["effstats", "sequential", "update", str(seq), "<RESULTS.csv>"]
    words = shlex.split(next(ln for ln in out.splitlines() if ln.strip().startswith("lm_eval ")))
    assert words[words.index("--tasks") + 1] == task


_RAW_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_report_files_show_control_characters_as_escapes(tmp_path, capsys):
    d = simulate_responses(13, 90, rng=3)
    tasks = ["clear\x1b[2J", "bell\x07", "rtl\u202eevil\u200f"]
    models = [f"m{i}\x1b[31m" for i in range(12)] + ["new\u202e"]
    rm = ResponseMatrix(d.values, model_ids=models, item_ids=[f"{tasks[k % 3]}/{k}" for k in range(90)])
    rm.subset(models=range(12)).to_long().to_csv(tmp_path / "ref.csv", index=False)
    assert _run(["select", tmp_path / "ref.csv", "--budget", 15, "--out", tmp_path / "sel"], capsys)[0] == 0
    chosen = Selection.load(tmp_path / "sel").items
    rm.subset(models=[12], items=list(chosen)).to_long().to_csv(tmp_path / "new.csv", index=False)
    assert _run(["estimate", tmp_path / "sel", tmp_path / "new.csv", "--out", tmp_path / "est"], capsys)[0] == 0
    seq = tmp_path / "seq"
    code, _, err = _run(["sequential", "start", tmp_path / "ref.csv", "--against", models[0], "--initial", 30,
                         "--batch", 30, "--out", seq], capsys)
    assert code == 0, err
    run = SequentialRun.load(seq)
    while not run.stopped:
        rm.subset(models=[12], items=list(run.next_items)).to_long().to_csv(tmp_path / "b.csv", index=False)
        code, _, err = _run(["sequential", "update", seq, tmp_path / "b.csv"], capsys)
        assert code == 0, err
        run = SequentialRun.load(seq)
    board = pd.DataFrame(rm.values.reshape(13, 3, 30).mean(axis=2), index=pd.Index(models, name="model"),
                         columns=tasks)
    board.to_csv(tmp_path / "board.csv")
    code, _, err = _run(["audit", tmp_path / "board.csv", "--out", tmp_path / "rep", "--n-boot", 30,
                         "--no-progress"], capsys)
    assert code == 0 and "Glyph" not in err and not _RAW_CONTROL.search(err), err
    files = [f for d in ("est", "seq", "rep") for f in (tmp_path / d).rglob("*")
             if f.suffix in (".md", ".html", ".csv")]
    assert {"estimate.md", "estimate.html", "estimate.csv", "tasks.csv", "decision.md", "report.md"} <= {
        f.name for f in files}
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert not _RAW_CONTROL.search(text), (f.name, _RAW_CONTROL.search(text))
    assert "\\x1b" in (tmp_path / "est" / "estimate.md").read_text()
    assert "\\u202e" in (tmp_path / "est" / "estimate.html").read_text()


@pytest.mark.parametrize("layout", ["lm-eval", "helm"])
def test_a_folder_of_links_to_runs_reads_as_the_runs(tmp_path, capsys, layout):
    """Runs gathered from several places by folder links read as the runs themselves; a link to a folder above
    (a loop) is walked once."""
    import helm_fixtures as hf

    if layout == "lm-eval":
        real = _ref_logs(tmp_path)
        new = "m11"
    else:
        hf.write_suite(tmp_path / "helm", [hf.Scenario("ta", n=30), hf.Scenario("tb", n=30)], 6)
        real = tmp_path / "helm" / "runs" / "v1"
        new = hf.model_names(6)[-1].replace("/", "_")
    runs = sorted(real.iterdir())
    gathered, new_runs = tmp_path / "gathered", tmp_path / "new_runs"
    for d in (gathered / "a", new_runs):
        d.mkdir(parents=True)
    for k, run in enumerate(runs):
        dest = new_runs if run.name.endswith(new) else gathered / ("a" if k % 2 else "")
        (dest / run.name).symlink_to(run, target_is_directory=True)
    (gathered / "a" / "up").symlink_to(gathered, target_is_directory=True)
    (gathered / "a" / "above").symlink_to(tmp_path, target_is_directory=True)  # holds the new model's runs too
    (gathered / "root").symlink_to("/", target_is_directory=True)
    copied = tmp_path / "copied"
    shutil.copytree(gathered, copied, symlinks=False, ignore=shutil.ignore_patterns("up", "above", "root"))
    for name, src in (("from_copies", copied), ("from_links", gathered)):
        code, _, err = _run(["select", src, "--budget", 12, "--method", "random", "--out", tmp_path / name,
                             "--no-progress"], capsys)
        assert code == 0, err
    a, b = (Selection.load(tmp_path / name) for name in ("from_copies", "from_links"))
    assert a.reference["n_models"] == b.reference["n_models"] == (11 if layout == "lm-eval" else 5)
    assert a.reference["n_items"] == b.reference["n_items"] and list(a.items) == list(b.items)
    # a new model's results given as a folder of links are found too
    code, out, err = _run(["estimate", tmp_path / "from_links", new_runs, "--restrict-to-manifest"], capsys)
    assert code == 0, err


def test_a_folder_reached_by_a_link_too_is_read_by_its_own_name(tmp_path):
    """lm-eval logs without a results file are named by their folder: the real folder's name, whatever order the
    file system lists a link to it under another name in."""
    d = simulate_responses(3, 20, rng=4)
    rm = ResponseMatrix(d.values, model_ids=["org/real", "org/other", "org/third"],
                        item_ids=[f"t/{k}" for k in range(20)])
    logs = write_lm_eval_samples(rm, tmp_path / "logs")
    for f in logs.rglob("results_*.json"):
        f.unlink()
    for alias in ("00_alias", "zz_alias"):
        (logs / alias).symlink_to(logs / "org__real", target_is_directory=True)
    assert sorted(read_lm_eval_samples(logs).model_ids) == ["org/other", "org/real", "org/third"]


def test_a_link_to_proc_is_not_walked_into_other_processes_folders(tmp_path, monkeypatch):
    """/proc/<pid>/cwd leads into the folder each process works in (here this one's, holding another model's logs):
    a link into the kernel's file systems is not followed, and the logs read are the folder's own."""
    d = simulate_responses(4, 20, rng=5)
    rm = ResponseMatrix(d.values, model_ids=["org/a", "org/b", "org/c", "org/foreign"],
                        item_ids=[f"t/{k}" for k in range(20)])
    logs = write_lm_eval_samples(rm.subset(models=range(3)), tmp_path / "logs")
    elsewhere = write_lm_eval_samples(rm.subset(models=[3]), tmp_path / "elsewhere")
    (logs / "proc").symlink_to("/proc", target_is_directory=True)
    (logs / "sys").symlink_to("/sys", target_is_directory=True)
    monkeypatch.chdir(elsewhere)
    assert sorted(read_lm_eval_samples(logs).model_ids) == ["org/a", "org/b", "org/c"]


def test_paths_with_line_breaks_are_printed_each_on_one_line(tmp_path, capsys):
    """A folder or file name holding a line break is printed as an escape on its line, as names from the data are:
    a line of the output never starts with the rest of a name."""
    d = simulate_responses(13, 60, rng=3)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(13)], item_ids=[f"t/{k}" for k in range(60)])
    rm.subset(models=range(12)).to_long().to_csv(tmp_path / "ref.csv", index=False)
    sel, seq = tmp_path / "sel\nSELTAIL", tmp_path / "seq\rSEQTAIL"
    printed = []
    code, out, err = _run(["select", tmp_path / "ref.csv", "--budget", 15, "--out", sel], capsys)
    assert code == 0, err
    printed.append(out)
    new = tmp_path / "new\nNEWTAIL.csv"
    rm.subset(models=[12], items=list(Selection.load(sel).items)).to_long().to_csv(new, index=False)
    code, out, err = _run(["estimate", sel, new], capsys)
    assert code == 0, err
    printed.append(out)
    code, out, err = _run(["sequential", "start", tmp_path / "ref.csv", "--half-width", 0.3, "--initial", 20,
                           "--batch", 20, "--out", seq], capsys)
    assert code == 0, err
    printed.append(out)
    for k in range(3):
        run = SequentialRun.load(seq)
        if run.stopped:
            break
        rm.subset(models=[12], items=list(run.next_items)).to_long().to_csv(tmp_path / f"b{k}.csv", index=False)
        code, out, err = _run(["sequential", "update", seq, tmp_path / f"b{k}.csv"], capsys)
        assert code == 0, err
        printed.append(out)
    code, out, err = _run(["sequential", "status", seq], capsys)
    assert code == 0, err
    printed.append(out)
    text = "\n".join(printed)
    assert "sel\\nSELTAIL" in text and "seq\\rSEQTAIL" in text  # the paths are shown, escaped
    lines = text.replace("\r", "\n").splitlines()
    assert not [ln for ln in lines if ln.startswith(("SELTAIL", "SEQTAIL", "NEWTAIL"))]
