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


def test_readme_tour_executes(tmp_path):
    # as a user would: the tour pasted into a script in another folder, run by the venv's python, no PYTHONPATH
    text = README.read_text()
    m = re.search(r"```python\n(.*?)```", text, re.S)
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
