"""``design``'s ``astar`` (total lower-bound spending): the range gsDesign's own check allows, [0, 1 - alpha] for test
types 5 / 6, compared with gsDesign itself; refused with test types 1 / 2, which have no lower spending."""
from __future__ import annotations

import itertools

import pytest

from effstats import rbridge
from effstats.sequential import design

ALPHAS = (0.025, 0.05, 0.3)


def _astars(alpha):
    top = 1 - alpha
    return (0.0, 0.5, top - 1e-9, top, top + 1e-9, 0.9, 0.96, 0.999)


@pytest.mark.needs_r
@pytest.mark.parametrize("tt,alpha", list(itertools.product((5, 6), ALPHAS)))
def test_astar_is_refused_exactly_where_gsdesign_refuses_it(tt, alpha):
    gs = rbridge.r_package("gsDesign")
    for astar in _astars(alpha):
        try:
            rbridge.r_call(gs.gsDesign, k=3, test_type=tt, alpha=alpha, beta=0.1, astar=astar)
            r_accepts = True
        except rbridge.RError as exc:
            assert "astar" in str(exc)
            r_accepts = False
        if r_accepts:
            d, g = (design(3, alpha=alpha, test_type=tt, astar=astar, backend=b) for b in ("native", "gsdesign"))
            assert d.astar == g.astar == astar
            assert d.lower == pytest.approx(g.lower, abs=1e-5) and d.upper == pytest.approx(g.upper, abs=1e-5)
        else:
            said = rf"^astar: expected a number in \[0, 1 - alpha\] = \[0, {1 - alpha:g}\]"
            with pytest.raises(ValueError, match=said):
                design(3, alpha=alpha, test_type=tt, astar=astar)
        assert r_accepts == (astar <= 1 - alpha), astar


@pytest.mark.parametrize("tt", [1, 2])
@pytest.mark.parametrize("backend", ["native", pytest.param("gsdesign", marks=pytest.mark.needs_r)])
def test_astar_without_a_lower_bound_is_refused_as_lower_param_is(tt, backend):
    with pytest.raises(ValueError, match=rf"^astar: lower-bound spending needs test_type 5 or 6, got test_type={tt}"):
        design(3, alpha=0.05, test_type=tt, astar=0.5, backend=backend)
    with pytest.raises(ValueError, match="^lower_param: a lower bound needs test_type 3-6"):
        design(3, alpha=0.05, test_type=tt, lower_param=1.0, backend=backend)
    assert design(3, alpha=0.05, test_type=tt, astar=0.0, backend=backend).k == 3
