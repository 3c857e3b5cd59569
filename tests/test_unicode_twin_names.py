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
