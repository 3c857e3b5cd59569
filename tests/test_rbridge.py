"""gsDesign is really installed and callable from Python through rpy2; R errors and warnings cross the bridge."""
import warnings

import numpy as np
import pytest

from effstats import rbridge
from effstats.exceptions import RWarning

pytestmark = pytest.mark.needs_r


def test_gsdesign_pocock_bound():
    gs = rbridge.r_package("gsDesign")
    d = rbridge.r_call(gs.gsDesign, k=3, test_type=2, sfu="Pocock")
    upper = np.asarray(d.rx2("upper").rx2("bound"))
    assert upper.shape == (3,)
    np.testing.assert_allclose(upper, 2.289, atol=5e-4)


def test_keyword_names_are_translated_like_importr():
    import rpy2.robjects as ro

    gs = rbridge.r_package("gsDesign")
    d = rbridge.r_call(gs.gsDesign, k=2, test_type=1, alpha=0.01, sfu=gs.sfLDOF, n_I=ro.FloatVector([0.2, 1.0]),
                       maxn_IPlan=1.0)
    assert int(d.rx2("test.type")[0]) == 1
    # rpact's one-sided LD O'Brien-Fleming bounds for these looks: 5.641579 / 2.326348
    np.testing.assert_allclose(np.asarray(d.rx2("upper").rx2("bound")), [5.641579, 2.326348], atol=1e-6)


def test_r_errors_carry_rs_message():
    gs = rbridge.r_package("gsDesign")
    with pytest.raises(rbridge.RError, match=r"x\$k not on interval"):
        rbridge.r_call(gs.gsDesign, k=0)


def test_r_warnings_are_forwarded_as_rwarning():
    import rpy2.robjects as ro

    with pytest.warns(RWarning, match="NAs introduced by coercion") as rec:
        x = rbridge.r_call(ro.r["as.integer"], ro.StrVector(["7", "seven"]))
    assert list(x)[0] == 7  # the value still comes back
    assert len(rec) == 1 and str(rec[0].message).startswith("R warning:")


def test_several_r_warnings_each_become_one_rwarning():
    import rpy2.robjects as ro

    f = ro.r('function(x) { warning("first: ", x); warning("second"); x + 1 }')
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        y = rbridge.r_call(f, 1)
    msgs = [str(w.message) for w in rec if issubclass(w.category, RWarning)]
    assert msgs == ["R warning: first: 1", "R warning: second"]
    assert float(y[0]) == 2.0


def test_r_warning_can_be_turned_into_an_error():
    import rpy2.robjects as ro

    with warnings.catch_warnings():
        warnings.simplefilter("error", RWarning)
        with pytest.raises(RWarning, match="NaNs produced"):
            rbridge.r_call(ro.r["log"], -1)


def test_missing_package_says_how_to_install():
    with pytest.raises(rbridge.RPackageMissing, match="install.packages"):
        rbridge.r_package("surelyNotAnRPackage123")


def test_versions_report_gsdesign_and_rpact():
    v = rbridge.versions()
    assert v["gsDesign"] != "not installed" and v["R"].startswith("4.")
    assert v["rpact"] != "not installed"


def test_warnings_before_an_error_are_not_lost():
    """A warning R raises before failing reaches Python as RWarning, then the error as RError."""
    import rpy2.robjects as ro

    f = ro.r('function() { warning("convergence is doubtful"); stop("then it failed") }')
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with pytest.raises(rbridge.RError, match="^R error: then it failed$"):
            rbridge.r_call(f)
    assert [str(w.message) for w in rec if issubclass(w.category, RWarning)] == ["R warning: convergence is doubtful"]


def test_r_error_names_the_r_call_not_the_wrapper():
    """R's message with the R call that signalled it (gsDesign's checkRange), never the bridge's own `.f(...)`."""
    import rpy2.robjects as ro

    gs = rbridge.r_package("gsDesign")
    with pytest.raises(rbridge.RError, match=r"^R error in checkRange\(.*\): x\$alpha not on interval \(0, 0.5\]"):
        rbridge.r_call(gs.gsDesign, k=2, test_type=2, alpha=0.7)
    with pytest.raises(rbridge.RError) as exc:
        rbridge.r_call(ro.r('function() stop("boom")'))
    assert str(exc.value) == "R error: boom"


def test_r_null_value_comes_back():
    import rpy2.robjects as ro

    assert rbridge.r_call(ro.r("function() NULL")) is ro.NULL or len(rbridge.r_call(ro.r("function() NULL"))) == 0


def test_an_error_signalled_by_the_called_function_names_no_wrapper_call():
    base = rbridge.r_package("base")
    with pytest.raises(rbridge.RError, match="^R error: negative sample size$"):
        rbridge.r_call(base.stop, "negative sample size")
