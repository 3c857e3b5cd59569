"""The README's API tour runs as written and prints sensible numbers."""
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_starts_with_the_two_commands():
    text = README.read_text()
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert first_block.split("\n")[0].startswith("make demo") and "make test" in first_block


def _tour(text: str) -> re.Match:
    """The python block of the README's "A tour" section."""
    at = text.index("## A tour")
    return re.compile(r"```python\n(.*?)```", re.S).search(text, at)


def test_readme_tour_executes(tmp_path):
    # as a user would: the tour pasted into a script in another folder, run by the venv's python, no PYTHONPATH
    text = README.read_text()
    m = _tour(text)
    # padded with blank lines so that a traceback names the README's own line numbers
    code = "\n" * text[: m.start(1)].count("\n") + m.group(1)
    script = tmp_path / "README.md.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.strip().splitlines()
    # first printed line: Sort & Search accuracy error of new models from 200 items, in [0, 0.1]
    assert 0 <= float(lines[0]) < 0.1
    # the errors the tour's comments quote (S&S design-based, k / n, DISCO, direct) are the ones it prints, to the
    # three decimals quoted
    prints = [ln for ln in m.group(1).splitlines() if ln.startswith("print(")][:4]
    quoted = [re.search(r"#[^#]*?(\d+\.\d{3})", ln) for ln in prints]
    assert all(quoted), prints
    for q, out in zip(quoted, lines[:4]):
        assert abs(float(out) - float(q.group(1))) <= 5e-4, (q.group(0), out)


def test_readme_tour_designs_without_r(tmp_path):
    """The tour's group-sequential design runs for a pip user without R (rpy2 blocked) and prints Pocock's constant
    bound (2.413 at each of 5 looks, two-sided 5 %: Jennison and Turnbull 2000, Table 2.1); with R, gsDesign's
    bounds, which the comment beside it names as the cross-check, are the same."""
    m = _tour(README.read_text())
    code = [ln for ln in m.group(1).splitlines() if "design" in ln.split("#")[0]]  # the import and the design call
    assert len(code) >= 2, code
    script = tmp_path / "tour_design.py"
    script.write_text("import sys\nsys.modules['rpy2'] = None  # a pip install without R\n" + "\n".join(code)
                      + "\nprint('rpy2 imported' if sys.modules.get('rpy2') else 'no rpy2')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    *shown, said = r.stdout.strip().splitlines()
    upper = [float(x) for x in " ".join(shown).strip("[] ").replace("[", " ").replace("]", " ").split()]
    assert said == "no rpy2" and len(upper) == 5 and all(abs(u - 2.413) < 1e-3 for u in upper), r.stdout
    assert 'backend="gsdesign"' in m.group(1)  # still shown, as the cross-check
    try:
        from effstats.rbridge import RPackageMissing
        from effstats.sequential import design

        r_upper = design(k=5, alpha=0.05, sided=2, spending="pocock", backend="gsdesign").upper
    except RPackageMissing:  # no R here (the Debian 13 run): the native bounds were checked above
        return
    assert max(abs(a - b) for a, b in zip(upper, r_upper)) < 1e-6


def test_readme_make_targets_exist():
    # every `make X` the README tells a user to type is a target of the Makefile (and so are the two commands)
    text = README.read_text()
    makefile = (README.parent / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", makefile, re.M))
    said = set(re.findall(r"\bmake ([a-z][\w-]*)", text))
    assert {"demo", "test", "lab", "notebook", "reports"} <= said
    assert said <= targets, f"README mentions make targets the Makefile lacks: {sorted(said - targets)}"


def test_readme_paths_exist():
    # scripts and folders of the checkout that the README names are there
    text = README.read_text()
    for path in set(re.findall(r"`((?:scripts|notebooks|benchmarks)/[\w./-]+)`", text)):
        assert (README.parent / path).exists(), path


def test_readme_lists_every_notebook():
    text = README.read_text()
    missing = [p.name for p in sorted((README.parent / "notebooks").glob("*.ipynb")) if f"`{p.name}`" not in text]
    assert not missing, f"README's notebooks table lacks {missing}"


def test_contributing_describes_the_current_workflow():
    # the developers' guide once told contributors to put the checkout on PYTHONPATH and use the Agg backend
    text = (README.parent / "CONTRIBUTING.md").read_text()
    assert "PYTHONPATH" + "=" not in text.replace(" ", "") and "use(\"Agg\")`," in text  # Agg only as a "don't"
    makefile = (README.parent / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", makefile, re.M))
    said = set(re.findall(r"`make ([a-z][\w-]*)", text))
    assert {"setup", "test", "demo", "lab", "reports"} <= said <= targets, sorted(said - targets)
    for path in set(re.findall(r"`((?:tests|scripts|effstats|benchmarks)/[\w./-]+\.(?:py|sh))`", text)):
        assert (README.parent / path).exists(), path
    for name in ("check_option", "check_positive", "InputTypeError", "NotFittedError", "ConfidenceInterval",
                 "EFFSTATS_FIGURES", "claims", "tqdm.auto", "\"effstats\""):
        assert name in text, name


def test_readme_other_python_blocks_run_as_written(tmp_path):
    # the Dask block once used names it never defined (cache, leaderboard, evaluator, scores_a) and a scheduler at
    # tcp://scheduler:8786: every python block after the tour now runs as pasted, from another folder
    text = README.read_text()
    tour = _tour(text).start(1)
    blocks = [m for m in re.finditer(r"```python\n(.*?)```", text, re.S) if m.start(1) != tour]
    assert len(blocks) >= 3
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    outs = []
    for k, m in enumerate(blocks):
        script = tmp_path / f"README_block{k}.py"
        script.write_text("\n" * text[: m.start(1)].count("\n") + m.group(1))
        r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append((m.group(1), r.stdout.strip().splitlines()))
    loop_out = next(lines for code, lines in outs if "estimate(" in code)
    # the loop block is followed by what it prints, as the Quickstart is: a reader can check their run against it
    loop_end = next(m.end() for m in blocks if "estimate(" in m.group(1))
    shown = re.compile(r"\s*prints\s*```text\n(.*?)```", re.S).match(text, loop_end)
    assert shown, "the README's loop block is not followed by 'prints' and the text it prints"
    assert [ln.split() for ln in loop_out] == [ln.split() for ln in shown.group(1).strip().splitlines()], loop_out
    rows = [ln.split() for ln in loop_out[2:4]]  # model, estimate, low, high, rank, rank_low, rank_high
    truth = [float(x) for x in loop_out[4].strip("[]").split(",")]
    for row, t in zip(rows, truth):  # the loop's intervals cover the new models' accuracy on all items
        est, low, high, rank, r_lo, r_hi = map(float, row[1:])
        assert low <= est <= high and low <= t <= high and r_lo <= rank <= r_hi
    plan_out = next(lines for code, lines in outs if "plan(" in code)
    n_max, en1 = plan_out[0].split()
    assert int(n_max) == 4818 and round(float(en1)) == 3872  # the numbers the block's comment quotes
    dask_out = next(lines for code, lines in outs if "LocalCluster" in code)
    assert dask_out[0] == "True" and 0.9 < float(dask_out[1]) <= 1.0
    frac, decided = map(float, dask_out[2].split())
    assert frac < 0.1 and decided == 1.0  # the comment's "~0.045 of the items; decided in every run"


def test_readme_quickstart_prints_what_it_shows(tmp_path):
    # the Quickstart's python block, run as a script from another folder, prints the text block shown under it
    text = README.read_text()
    at = text.index("## Quickstart")
    code = re.compile(r"```python\n(.*?)```", re.S).search(text, at)
    shown = re.compile(r"```text\n(.*?)```", re.S).search(text, code.end())
    assert len(code.group(1).strip().splitlines()) <= 12
    script = tmp_path / "README_quickstart.py"
    script.write_text("\n" * text[: code.start(1)].count("\n") + code.group(1))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]

    def words(s):
        return [ln.split() for ln in s.strip().splitlines() if ln.strip()]

    assert words(r.stdout) == words(shown.group(1)), r.stdout


def test_readme_install_matches_the_package():
    # the Python version and the pip extras the Install section names are the package's own
    text = README.read_text()
    install = text[text.index("## Install"): text.index("## Quickstart")]
    pyproject = (README.parent / "pyproject.toml").read_text()
    version = re.search(r'requires-python = ">=(\d+\.\d+)"', pyproject).group(1)
    assert f"Python ≥ {version}" in install
    extras = set(re.findall(r"^(\w+) = \[", pyproject.split("[project.optional-dependencies]")[1].split("\n[")[0],
                            re.M))
    named = {e for group in re.findall(r"'\.\[([\w,]+)\]'", install) for e in group.split(",")}
    assert named and named <= extras, sorted(named - extras)
    assert 'backend="gsdesign"' in install and "make setup" in install and "make docs" in install


def test_readme_method_table_and_cli_help_list_every_method():
    """The README's ``select`` method table has a row for every workflow method, marks exactly the design-based ones
    valid outside the references' range, and ``--method``'s help names every design-based method."""
    from effstats.workflow import METHODS
    from effstats.workflow._tasks import design_methods

    text = README.read_text()
    rows = dict(re.findall(r"^\| `([\w-]+)`(?: \(default\))? \|(.*)$", text, re.M))
    assert set(METHODS) <= set(rows), sorted(set(METHODS) - set(rows))
    for m in design_methods():
        assert rows[m].split("|")[2].strip() == "yes", m
    out = subprocess.run([sys.executable, "-m", "effstats", "select", "--help"], capture_output=True, text=True,
                         check=True).stdout
    help_text = " ".join(out.split())
    method_help = help_text[help_text.index("--method"):help_text.index("--tasks")]
    assert all(m in method_help for m in design_methods()), method_help
    choosing = (README.parent / "docs" / "guide" / "choosing.rst").read_text()
    assert all(f"--method {m}" in " ".join(choosing.split()) for m in ("sortsearch", "aipw", "stratified-aipw"))


def test_readme_examples_call_the_command_pip_installs():
    # Install says `pip install -e .`, which puts `effstats` on the PATH: the examples call it so, and the Install
    # section says where `make setup` puts it instead
    text = README.read_text()
    calls = [ln for block in re.findall(r"```bash\n(.*?)```", text, re.S) for ln in block.splitlines()
             if re.search(r"(^|/)effstats ", ln)]
    assert len(calls) >= 8 and all(ln.startswith("effstats ") for ln in calls), calls
    install = text[text.index("## Install"): text.index("## Quickstart")]
    assert "pip install -e ." in install and "`.venv/bin/effstats`" in install
