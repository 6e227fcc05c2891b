"""The baselines of Park, Foulds, Chaudhuri & Welling 2016 ("Private Topic Modeling", Sec. 4, Fig. 1): linear and
advanced composition of the amplified steps, beside the paper's zCDP recipe (:func:`topicdp.baselines.paper_epsilon`).

Moved out of ``topicdp.baselines.accounting``: only ``dpsvi_composition.py``, ``bench_calibration.py`` and the tests
call them.
"""

from __future__ import annotations

import math

from topicdp._validation import check_delta, check_epsilon, check_int, check_option, check_real
from topicdp.baselines.accounting import _amplified, paper_epsilon, paper_noise_multiplier
from topicdp.rdp import smallest_meeting


#: the compositions of the paper's Fig. 1: its zCDP recipe (Eq. 5) and its two baselines (Sec. 4)
PAPER_COMPOSITIONS = ("zcdp", "advanced", "linear")


def paper_baseline_epsilon(noise_multiplier: float, sampling_rate: float, n_iterations: int, delta: float,
                           composition: str) -> float:
    """Total epsilon of the paper's baselines (Park et al. 2016, Sec. 4) for noise multiplier z at total ``delta``.

    Eqs. 3 and 6 per step, then ``"linear"`` (Dwork & Roth 2014, Thm. 3.16) or ``"advanced"`` composition (Thm. 3.20:
    ``J epsilon' (e^epsilon' - 1) + sqrt(2 J ln(1/delta'')) epsilon'``). The split of delta, left open by the paper:
    ``delta'' = J delta' = delta / 2`` (advanced), ``J delta' = delta`` (linear). ``"zcdp"`` is :func:`paper_epsilon`.
    """
    check_option(composition, "composition", PAPER_COMPOSITIONS)
    if composition == "zcdp":
        return paper_epsilon(noise_multiplier, sampling_rate, n_iterations, delta)["epsilon"]
    z = check_real(noise_multiplier, "noise_multiplier", low=0.0)
    eps_prime = _amplified(math.sqrt(2.0 * math.log(1.25 / _baseline_delta_iter(delta, sampling_rate, n_iterations,
                                                                               composition))) / z, sampling_rate)
    if composition == "linear":
        return n_iterations * eps_prime
    return _advanced(eps_prime, n_iterations, delta / 2.0)


def paper_baseline_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, n_iterations: int,
                                    composition: str) -> float:
    """The inverse of :func:`paper_baseline_epsilon`: closed form for ``"linear"`` and ``"zcdp"``, the one search
    (:func:`topicdp.rdp.smallest_meeting`) for ``"advanced"``."""
    check_option(composition, "composition", PAPER_COMPOSITIONS)
    eps, delta = check_epsilon(epsilon), check_delta(delta)
    nu = check_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_open=False)
    n_iterations = check_int(n_iterations, "n_iterations", low=1)
    if composition == "zcdp":
        return paper_noise_multiplier(eps, delta, nu, n_iterations)
    delta_iter = _baseline_delta_iter(delta, nu, n_iterations, composition)  # validated once, before any search
    # linear: J epsilon' = epsilon, so epsilon' = epsilon / J; Eq. 6 inverted, then Eq. 3 solved for z
    z_linear = math.sqrt(2.0 * math.log(1.25 / delta_iter)) / math.log1p(math.expm1(eps / n_iterations) / nu)
    if composition == "linear":
        return z_linear
    # advanced: decreasing in z; the cost is paper_baseline_epsilon's floating point without its validation
    scale = math.sqrt(2.0 * math.log(1.25 / delta_iter))
    return smallest_meeting(lambda z: _advanced(_amplified(scale / z, nu), n_iterations, delta / 2.0), eps,
                            guess=z_linear)


def _advanced(eps_prime: float, n_iterations: int, slack: float) -> float:
    """Dwork & Roth 2014, Thm. 3.20: the epsilon of J-fold adaptive composition of epsilon'-DP steps at slack."""
    return (n_iterations * eps_prime * math.expm1(eps_prime)
            + math.sqrt(2.0 * n_iterations * math.log(1.0 / slack)) * eps_prime)


def _baseline_delta_iter(delta: float, nu: float, n_iterations: int, composition: str) -> float:
    share = delta / 2.0 if composition == "advanced" else delta  # the J delta' of the steps
    delta_iter = share / (n_iterations * nu)
    if not 0.0 < delta_iter < 1.0:
        raise ValueError(f"delta={delta:g} gives delta_iter={delta_iter:g} outside (0, 1) for {n_iterations} steps at "
                         f"sampling rate {nu:g}")
    return delta_iter
