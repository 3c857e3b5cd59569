"""effstats is really installed: importable and runnable from any folder, with no PYTHONPATH."""
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# where pip puts console scripts for this Python: the venv's bin, or e.g. /usr/local/bin for a system Python
SCRIPTS = Path(sysconfig.get_path("scripts"))


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
    exe = SCRIPTS / "effstats"
    assert exe.exists(), f"{exe} is missing: effstats is not installed for {sys.executable} (run make setup)"
    r = subprocess.run([str(exe), "--help"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "audit" in r.stdout


def test_no_pythonpath_in_tests_or_runners():
    # nothing may hide a missing install by putting the checkout on the path
    offenders = []
    for p in [*ROOT.joinpath("tests").glob("*.py"), *ROOT.joinpath("scripts").glob("*"), ROOT / "Makefile",
              ROOT / ".ci" / "run"]:
        if p.is_file() and p.name != "test_install.py" and "PYTHONPATH=" in p.read_text(errors="ignore").replace(" ",
                                                                                                                 ""):
            offenders.append(p.name)
    assert not offenders, offenders


def test_a_folder_named_effstats_in_the_working_directory_does_not_shadow_the_package(tmp_path):
    # A user who clones into ~/effstats and starts Python or Jupyter in ~ has a folder named effstats (the clone,
    # with no __init__.py at its top) in the working directory. With setuptools' default editable install (an
    # import hook that runs after the path search) that folder wins as an empty namespace package and
    # `effstats.ResponseMatrix` is an AttributeError; the path-based (compat) install finds the real package.
    (tmp_path / "effstats").mkdir()
    r = subprocess.run([sys.executable, "-c",
                        "import effstats; print(effstats.__file__); print(effstats.ResponseMatrix)"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == str(ROOT / "effstats" / "__init__.py")


def test_pip_extras_cover_what_make_and_the_notebooks_import():
    # pip users (no Debian packages) get the Jupyter server, the report renderer and the cluster from the extras
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {k: {d.split(">")[0].split("[")[0].split("=")[0].strip() for d in v} for k, v in extras.items()}
    assert {"notebook", "nbconvert", "nbclient", "nbformat", "ipykernel"} <= names["jupyter"]
    assert {"dask", "distributed", "zarr"} <= names["dask"]
    assert {"pytest", "pytest-xdist", "hypothesis"} <= names["dev"]
    assert names["r"] == {"rpy2"}
    # and the manual steps printed off Debian install them
    assert ".[r,dev,jupyter,dask]" in (ROOT / "scripts" / "setup.sh").read_text()


def test_installed_versions_meet_the_declared_bounds():
    # make test runs on Debian 12's versions (the lower bounds) and on Debian 13's: each satisfies pyproject.toml's
    # bounds, for the dependencies and for every extra that is installed
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert SpecifierSet(project["requires-python"]).contains(".".join(map(str, sys.version_info[:3])))
    extras = [d for group in project["optional-dependencies"].values() for d in group]
    outside, checked = [], 0
    for spec in project["dependencies"] + extras:
        req = Requirement(spec)
        try:
            have = version(req.name)
        except PackageNotFoundError:
            assert spec in extras, f"{req.name} is a dependency and is not installed"
            continue
        checked += 1
        if not req.specifier.contains(have, prereleases=True):
            outside.append(f"{req.name} {have} (declared {req.specifier})")
    assert not outside, outside
    assert checked >= len(project["dependencies"])
