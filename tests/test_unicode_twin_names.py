"""Names that print alike but differ in Unicode normalisation (NFC, NFD), given as ``--against`` or as new results'
ids: one function (``refuse_unicode_twins``) refuses both, showing both names as escapes, in one short line."""
from __future__ import annotations

import unicodedata

import pandas as pd
import pytest

from effstats.cli import main
from effstats.workflow._new_results import refuse_unicode_twins


def _reference(tmp_path, model: str):
    rows = [(m, f"t/{j}", float((j + k) % 3 == 0)) for k, m in enumerate(["m0", "m1", model]) for j in range(9)]
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_csv(tmp_path / "ref.csv", index=False)
    return tmp_path / "ref.csv"


def test_a_long_against_name_in_another_normalisation_is_cut_in_one_short_line(tmp_path, capsys):
    """A 5,000-character model name: the refusal of its NFD twin shows each name cut to its first characters and
    its length (as the estimate's refusal of twin ids does), not 10,000 characters of escapes."""
    model = "caf\u00e9-" + "x" * 5000
    ref = _reference(tmp_path, model)
    code = main(["sequential", "start", str(ref), "--out", str(tmp_path / "s"), "--rule", "efficacy", "--against",
                 unicodedata.normalize("NFD", model)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and len(err) < 600, err
    assert "(5006 characters)" in err and "(5005 characters)" in err and "cafe\\u0301-xx" in err, err
    assert err.endswith("differs from it only by Unicode normalisation: give that one"), err


@pytest.mark.parametrize("given, known", [("caf\u00e9", "cafe\u0301"), ("cafe\u0301", "caf\u00e9")])
def test_one_name_and_many_ids_are_refused_by_one_function(given, known):
    """Either form given, either form known: the one-name message names the argument and both names as escapes;
    the ids' message counts them and names the forms."""
    with pytest.raises(ValueError) as one:
        refuse_unicode_twins([given], ["m0", known], "the reference data", what="reference model", name="against",
                             one=True)
    assert str(one.value) == (f"against: no reference model {given!r} (written {ascii(given)}); the reference model "
                              f"{known!r} (written {ascii(known)}) differs from it only by Unicode normalisation: "
                              "give that one")
    with pytest.raises(ValueError, match=r"^new_results: 1 model id\(s\) differ from the reference data's only by "
                       r"Unicode normalisation"):
        refuse_unicode_twins([given, "m0"], ["m0", known], "the reference data", what="model")
    refuse_unicode_twins([known], ["m0", known], "the reference data", what="reference model", name="against",
                         one=True)


@pytest.fixture(scope="module")
def cafe_logs(tmp_path_factory):
    """lm-eval logs of the tasks 'café' (NFC, as lm-eval names its files) and 'tea', and a selection from them."""
    from effstats import ResponseMatrix
    from effstats.datasets import simulate_responses
    from effstats.workflow import write_lm_eval_samples

    root = tmp_path_factory.mktemp("cafe")
    d = simulate_responses(12, 40, rng=1)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(12)],
                        item_ids=[f"{t}/{k}" for t in ("caf\u00e9", "tea") for k in range(20)])
    write_lm_eval_samples(rm, root / "logs")
    assert main(["select", str(root / "logs"), "--budget", "12", "--out", str(root / "sel"), "--no-progress"]) == 0
    return root


@pytest.mark.parametrize("argv", [
    lambda r, t: ["select", r / "logs", "--budget", 12, "--tasks", t, "--out", r / "s"],
    lambda r, t: ["select", r / "logs", "--budget", 12, "--metric", f"{t}=acc,acc", "--out", r / "s"],
    lambda r, t: ["select", r / "logs", "--budget", 12, "--filter", f"{t}=none", "--out", r / "s"],
    lambda r, t: ["estimate", r / "sel", r / "logs", "--model", "m0", "--restrict-to-manifest", "--tasks", t],
], ids=["select --tasks", "select --metric", "select --filter", "estimate --tasks"])
def test_a_task_named_in_another_normalisation_is_said_so(cafe_logs, capsys, argv):
    nfd = unicodedata.normalize("NFD", "caf\u00e9")
    code = main([str(a) for a in argv(cafe_logs, nfd)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.endswith(f"{nfd!r} (written 'cafe\\u0301') differs from the task 'caf\u00e9' (written 'caf\\xe9') "
                        "only by Unicode normalisation: give that one"), err
