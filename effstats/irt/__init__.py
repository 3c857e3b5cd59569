r"""Item response theory: the 2PL / multidimensional 2PL model, the tinyBenchmarks estimators, adaptive testing.

* :class:`effstats.irt.IRT2PL` — :math:`P(Y_{mi} = 1) = \sigma(\theta_m \cdot a_i - b_i)`, fitted by marginal ML
  (Bock–Aitkin EM, one dimension) or regularised joint ML (alternating Newton, any dimension); abilities of new
  models from a few items (MAP or ML), with their covariance; what is identifiable (its Notes).
* :class:`effstats.irt.TinyBenchmarks` — anchor points (random / correctness clustering /
  IRT-embedding clustering) and the weighted, p-IRT and gp-IRT estimates, with the reference implementation's
  defaults (IRT dimension chosen among 2/5/10/15 on held-out source models, ML abilities), the validation scoring
  each dimension from the items the estimator selects.
* :class:`effstats.irt.AdaptiveTest` — adaptive testing on a calibrated one-dimensional bank: the next item by
  Fisher information at the current ability, the ability's posterior on a grid, stopping at a target standard
  error; :class:`effstats.irt.AdaptiveResult` holds the ability and the whole-bank accuracy with its interval.

References
----------
Birnbaum, A. (1968). Some latent trait models and their use in inferring an examinee's ability. In F. M. Lord &
M. R. Novick, *Statistical Theories of Mental Test Scores*, chapters 17–20. Addison-Wesley, Reading, MA.

Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. & Yurochkin, M. (2024). tinyBenchmarks: evaluating LLMs with
fewer examples. *Proceedings of the 41st International Conference on Machine Learning (ICML)*, arXiv:2402.14992.

Bock, R. D. & Aitkin, M. (1981). Marginal maximum likelihood estimation of item parameters: application of an EM
algorithm. *Psychometrika* 46(4), 443–459.

Reckase, M. D. (2009). *Multidimensional Item Response Theory*. Springer, New York.
"""
from ._adaptive import AdaptiveResult, AdaptiveTest
from ._model import IRT2PL
from ._tinybenchmarks import REFERENCE_DIMS, TinyBenchmarks

__all__ = ["IRT2PL", "TinyBenchmarks", "REFERENCE_DIMS", "AdaptiveTest", "AdaptiveResult"]
