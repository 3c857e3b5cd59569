"""Pinned estimates of IRT2PL and TinyBenchmarks on small shapes (complete and with missing cells, 1-D marginal ML
and multidimensional joint ML): however the fitting code batches, blocks or factorises its steps, it must return
these numbers to 1e-6 (the same iterations, the same estimates). Values computed with effstats' whole-matrix IRT
steps by the cases below; each array is summarised by ``digest`` (a fixed random projection, the sum of
absolute values and the first three entries), which moves with any entry. The anchor-corr cases' selections, and
the estimates that use them, come from the anchor k-means on distinct correctness vectors
(``effstats._items._weighted_anchors``, one run); their dimension, validation errors and λ do not depend on the
anchors and keep the whole-matrix steps' values.

TinyBenchmarks' ``selection="anchor-irt"`` is not pinned: its k-means on the fitted (a, b) picks other anchors
when (a, b) move by 1e-15 (measured on the 45 x 600 case below: relative perturbations of 1e-15 and 1e-13 changed
the selection, 1e-11 did not), so no fitting code can promise its selection beyond the platform's rounding.
"""
import warnings

import numpy as np
import pytest

from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL, TinyBenchmarks


def data(m, n, d, seed, miss):
    Y = simulate_responses(m, n, n_dims=d, rng=seed).values.astype(float)
    if miss:
        Y[np.random.default_rng(seed + 100).random(Y.shape) < miss] = np.nan
    return Y


def digest(x, seed):
    x = np.asarray(x, float).ravel()
    w = np.random.default_rng(seed).standard_normal(x.size)
    return [float(x @ w), float(np.abs(x).sum())] + x[:3].tolist()


def assert_digest(got, want, size):
    # entries to 1e-6; the two sums over `size` entries to 1e-6 per entry (sqrt(size) for the random projection)
    np.testing.assert_allclose(got[2:], want[2:], rtol=0, atol=1e-6)
    assert abs(got[0] - want[0]) <= 1e-6 * np.sqrt(size) and abs(got[1] - want[1]) <= 1e-6 * size, (got[:2], want[:2])


PINNED_IRT = [
    {"case": [30, 200, 1, 0, 0.0], "n_iter": 18, "loss": 0.5334256034641681,
     "a": [-19.669304465027764, 188.76650169680977, 0.32882257147260463, 0.37803564418992114, 0.8409834659914754],
     "b": [0.5284952898436258, 183.10483582297354, -1.0152849682037204, 0.27771491068129234, 0.48078254382750035],
     "theta": [-2.0830684228644634, 24.072078675652335, 0.310816959460732, 0.24614059063185578, 0.7509838101751828],
     "proba": [60.141623196280506, 2827.721736275369, 0.7535225804614833, 0.460031703177779, 0.44537128631390094],
     "abilities": [-1.354146030285189, 3.7703809226597156, 0.40679487442039, -0.00579849782520966, 0.9098755385643682]},
    {"case": [40, 600, 1, 1, 0.15], "n_iter": 12, "loss": 0.44828614050249294,
     "a": [-50.73013828069839, 675.5716505445182, 0.873667976510073, 1.2571564759665266, 1.4829309141023295],
     "b": [6.04542679864083, 512.2693469568885, -0.6505961382382925, -0.8729022927317244, 0.567174273573774],
     "theta": [-1.7086507953421535, 28.99003564056154, 0.2938105794676208, 0.975475738694442, 0.391047187901335],
     "proba": [109.88652487912739, 12174.059019243083, 0.7124450948098501, 0.7759585745103288, 0.4671788926145356],
     "abilities": [-0.7842722560373966, 3.0471887632390775, -0.1391195790217485, 0.5589927107141762,
                   -0.08355398539755912]},
    {"case": [30, 300, 2, 2, 0.0], "n_iter": 24, "loss": 0.48066762828998205,
     "a": [-1.8276962340658103, 543.5100224294631, 4.8732562881943355, -2.283429199640921, 1.5185835884458332],
     "b": [-1.3450772588943818, 303.7947162095387, 1.2677914164133037, -0.6515666632703709, -0.8387824385149706],
     "theta": [4.18204550608441, 47.06667944580683, -0.2169300358075658, -1.6868593525638027, -2.4201271812164404],
     "proba": [181.42547422539118, 4810.718318410646, 0.8215488966229536, 0.33048382220040184, 0.231782040347926],
     "abilities": [2.7507067379444967, 12.865624842430943, -0.17820704964275028, -1.5816841856000203,
                   -2.483821788858661]},
    {"case": [40, 500, 3, 3, 0.15], "n_iter": 67, "loss": 0.39406042840288763,
     "a": [9.679154272261972, 1402.295756327141, 0.8993575736466863, 0.8066024828054774, 0.13731996562168597],
     "b": [48.004361114455776, 525.4690551750404, -0.518878647746359, -1.5718331840192472, 1.4325032691791089],
     "theta": [14.456542669519381, 78.55776006927971, -0.32296684910954676, 4.324143409843758, -2.374666652787234],
     "proba": [179.4796103322164, 9441.517491775758, 0.9673965894286416, 0.907558232636179, 0.02717776987439722],
     "abilities": [4.2583517364095025, 14.982620958752502, -0.6933404006768574, 2.1473994917203068,
                   -1.2451403002823418]},
    {"case": [25, 300, 5, 4, 0.0], "n_iter": 76, "loss": 0.38830002256126284,
     "a": [-38.28139895523459, 1549.7530397438204, 1.1271406397740054, -0.5687964449243178, -0.2067581173372717],
     "b": [6.6243929632977725, 407.58443787486965, -0.22439742214961525, 1.7450226169998841, 0.371231086104868],
     "theta": [-31.752599593871977, 89.4977628929591, -0.08256168453451022, -1.7169438844953173, -1.5127233630403734],
     "proba": [59.304242528119616, 3710.961773424519, 0.9999806066374519, 0.00057370601188047, 0.068988617817419],
     "abilities": [4.460241426919825, 48.74139499811801, -0.5721432861089153, -3.7034961376606756,
                   -2.6746025703487226]},
    {"case": [50, 1500, 2, 5, 0.1], "n_iter": 52, "loss": 0.4474291309635521,
     "a": [-12.119442911980407, 2936.961274734971, 0.41331496674540696, 0.6039982210116598, 1.1859424119731825],
     "b": [-44.572390542891526, 1481.8970044822768, -0.6202697520188714, 0.18327963418052398, 0.3476233392757576],
     "theta": [-3.602807002961606, 64.49764908538621, -0.8033430472730156, -0.6987265902494831, 0.41690024901725464],
     "proba": [47.0644954365141, 32309.818466315217, 0.46660141411845624, 0.18503768978504953, 0.4113788787070947],
     "abilities": [7.49652387279023, 7.853015203487114, -1.0320772201891095, -0.7328914698253607, 0.3100632779922713]},
    {"case": [12, 40, 3, 6, 0.1], "n_iter": 22, "loss": 0.31406900604636634,
     "a": [-4.334484306332437, 143.0076270024889, 2.5818040252532395, 1.0233229477076975, 0.4715479366984793],
     "b": [-6.879383810670958, 48.61618284029988, -1.359519305017674, -0.7661093672687159, -0.15113366699162922],
     "theta": [-2.541766736495635, 29.731752677062346, -0.007031108740440615, 0.017893021379335367,
               -0.6095340961589176],
     "proba": [5.137431436791632, 272.92841456622705, 0.7450249772866979, 0.599391890978112, 0.8294666388296713],
     "abilities": [-0.5883706482627054, 17.446428424625505, 0.3927144431963096, -0.15162678783024386,
                   0.6189196376935484]},
    {"case": [40, 20, 3, 7, 0.0], "n_iter": 60, "loss": 0.3834565385204932,
     "a": [5.727814327723202, 64.37072751924269, 0.6376555589102025, 0.11351617370150839, 0.36883890782031475],
     "b": [9.664904956214878, 33.2973351189495, -0.3226089581614177, -0.8983045054784627, 0.9724409154332436],
     "theta": [-8.135440131035166, 89.98758194964226, 0.47576781700380155, 0.615957781736126, 0.5549433699418799],
     "proba": [-8.12627112035749, 415.8092036922983, 0.7110709029168206, 0.9663874016718554, 0.6084614628071074],
     "abilities": [-16.41485824717309, 503.9276746076841, -57.478484532222694, 98.66103419244044, 88.0802649204638]},
]
PINNED_TB = [
    {"case": [40, 800, 1, 0, 0.0, 1, "anchor-corr"], "selected": [154.2175087366104, 8581.0, 14.0, 21.0, 27.0],
     "n_dims": 1, "lam": 0.19030767164243775, "errors": {"1": 0.021006631366214685},
     "weighted": [0.41625, 0.6075, 0.49, 0.56875, 0.21375, 0.45, 0.7675, 0.755],
     "p-irt": [0.4356136151380432, 0.596270862139341, 0.4928492007717471, 0.6013569170342922, 0.2873894923284878,
               0.488218160401551, 0.7119925514723446, 0.6801105470546415],
     "gp-irt": [0.431928570626542, 0.5984078532201549, 0.4923069760068341, 0.595151570574058, 0.2733753320025223,
                0.48094495128107473, 0.7225560447604551, 0.6943625844752486]},
    {"case": [40, 800, 2, 1, 0.1, 1, "random"], "selected": [361.6208036417698, 12609.0, 23.0, 29.0, 108.0],
     "n_dims": 1, "lam": 0.10753013636591272, "errors": {"1": 0.029742408115026542},
     "weighted": [0.4666666666666666, 0.6333333333333333, 0.16666666666666666, 0.5666666666666667, 0.36666666666666664,
                  0.5333333333333333, 0.16666666666666669, 0.3333333333333333],
     "p-irt": [0.5492850412688575, 0.6421911681203214, 0.18952641470429968, 0.541845882889767, 0.4784970231351008,
               0.5043287616214588, 0.2335771704299763, 0.4054065972922313],
     "gp-irt": [0.5404010761815539, 0.6412386839377698, 0.1870683028805226, 0.5445148651540058, 0.46647188965420144,
                0.5074476271728716, 0.2263822748359957, 0.3976565493903946]},
    {"case": [45, 600, 2, 2, 0.0, "validate", "anchor-corr"], "selected": [642.9989249062752, 8748.0, 10.0, 15.0, 26.0],
     "n_dims": 1, "lam": 0.451448997384782,
     "errors": {"1": 0.03855504014322999, "2": 0.04029255071262581, "3": 0.04109544543988916},
     "weighted": [0.39, 0.7733333333333334, 0.6783333333333332, 0.3716666666666667, 0.5166666666666666, 0.415,
                  0.4083333333333333, 0.6033333333333335],
     "p-irt": [0.4056944923858333, 0.6584370561189178, 0.5883123449281114, 0.4202102169772159, 0.5027053018135982,
               0.4349939612367611, 0.42477234539151715, 0.5557890434706946],
     "gp-irt": [0.39860922953378597, 0.7103068652706086, 0.628952229887235, 0.3982952798600212, 0.509008145978639,
                0.4259677074826753, 0.4173509698798539, 0.5772528654605539]},
]


@pytest.mark.parametrize("pinned", PINNED_IRT,
                         ids=lambda p: "x".join(map(str, p["case"][:2])) + f"-d{p['case'][2]}-miss{p['case'][4]}")
def test_irt_fit_reproduces_pinned_estimates(pinned):
    m, n, d, seed, miss = pinned["case"]
    Y = data(m, n, d, seed, miss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing-cell warnings
        irt = IRT2PL(d, random_state=seed).fit(Y)
        items = np.arange(0, n, 3)
        th_new = irt.abilities(np.nan_to_num(Y[:6, items]), items, method="mle")
    assert irt.n_iter_ == pinned["n_iter"]
    assert irt.loss_curve_[-1] == pytest.approx(pinned["loss"], abs=1e-9)
    for name, got, seed_ in (("a", irt.a_, 1), ("b", irt.b_, 2), ("theta", irt.theta_, 3),
                             ("proba", irt.predict_proba(), 4),
                             ("abilities", th_new, 5)):
        assert_digest(digest(got, seed_), pinned[name], np.size(got))


@pytest.mark.parametrize("pinned", PINNED_TB, ids=lambda p: f"{p['case'][6]}-{p['case'][5]}-miss{p['case'][4]}")
def test_tinybenchmarks_reproduces_pinned_estimates(pinned):
    m, n, sd, seed, miss, nd, sel = pinned["case"]
    Y = data(m, n, sd, seed, miss)
    src, tgt = Y[: m - 8], np.nan_to_num(Y[m - 8 :], nan=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = TinyBenchmarks(30, sel, "gp-irt", n_dims=nd, dims_grid=(1, 2, 3), validation="reference",
                             random_state=seed).fit(src)
        allp = est.predict_all(tgt)
    # item positions: exact, and so is their sum; the random projection to the last digits of numpy's summation order
    assert digest(est.selected_, 6) == pytest.approx(pinned["selected"], rel=1e-12, abs=0)
    assert est.n_dims_ == pinned["n_dims"]
    assert est.lambda_ == pytest.approx(pinned["lam"], abs=1e-6)
    assert {str(k): v for k, v in est.validation_errors_.items()} == pytest.approx(pinned["errors"], abs=1e-6)
    for name in ("weighted", "p-irt", "gp-irt"):
        np.testing.assert_allclose(allp[name], pinned[name], rtol=0, atol=1e-6)
