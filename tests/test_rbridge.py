"""gsDesign is really installed and callable from Python through rpy2."""
import numpy as np
import pytest

from effstats import rbridge


def test_gsdesign_pocock_bound():
    gs = rbridge.r_package("gsDesign")
    d = rbridge.r_call(gs.gsDesign, k=3, test_type=2, sfu="Pocock")
    upper = np.asarray(d.rx2("upper").rx2("bound"))
    assert upper.shape == (3,)
    np.testing.assert_allclose(upper, 2.289, atol=5e-4)


def test_r_errors_carry_rs_message():
    gs = rbridge.r_package("gsDesign")
    with pytest.raises(rbridge.RError, match="R error"):
        rbridge.r_call(gs.gsDesign, k=0)


def test_missing_package_says_how_to_install():
    with pytest.raises(rbridge.RPackageMissing, match="install.packages"):
        rbridge.r_package("surelyNotAnRPackage123")


def test_versions_report_gsdesign():
    v = rbridge.versions()
    assert v["gsDesign"] != "not installed" and v["R"].startswith("4.")
