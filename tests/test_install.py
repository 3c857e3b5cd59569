"""effstats is really installed: importable and runnable from any folder, with no PYTHONPATH."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def _env():
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_import_from_another_folder(tmp_path):
    r = subprocess.run([sys.executable, "-c", "import effstats, sys; print(effstats.__file__); print(sys.path[0])"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # the installed (editable) package is this checkout's, found without the checkout on sys.path
    assert r.stdout.splitlines()[0].startswith(str(ROOT / "effstats"))
    assert str(ROOT) not in r.stdout.splitlines()[1:]


def test_console_script_from_another_folder(tmp_path):
    exe = VENV_BIN / "effstats"
    assert exe.exists(), f"{exe} is missing: effstats is not installed into the venv (run make setup)"
    r = subprocess.run([str(exe), "--help"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "audit" in r.stdout


def test_no_pythonpath_in_tests_or_runners():
    # nothing may hide a missing install by putting the checkout on the path
    offenders = []
    for p in [*ROOT.joinpath("tests").glob("*.py"), *ROOT.joinpath("scripts").glob("*"), ROOT / "Makefile", ROOT / ".ci" / "run"]:
        if p.is_file() and p.name != "test_install.py" and "PYTHONPATH=" in p.read_text(errors="ignore").replace(" ", ""):
            offenders.append(p.name)
    assert not offenders, offenders
