"""Exact privacy of the Gaussian mechanism: the reference an audit of Gaussian noise is compared with.

Kept here (small, self-contained) so that the auditor does not depend on the calibration code it audits;
``topicdp.rdp`` has the production calibrations.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr, ndtri

from .._validation import check_real


def gaussian_delta(mu: float, epsilon: float) -> float:
    """delta(eps) of the Gaussian mechanism with mu = Delta / sigma (Balle & Wang 2018, Thm. 8).

        delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
    """
    a = math.exp(log_ndtr(mu / 2 - epsilon / mu))
    b = math.exp(epsilon + log_ndtr(-mu / 2 - epsilon / mu))
    return max(a - b, 0.0)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon of the Gaussian mechanism at ``delta``: smallest eps with delta(eps) <= delta."""
    mu = check_real(mu, "mu", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(mu, hi) > delta:
        hi *= 2.0
    return brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-12)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma giving (epsilon, delta)-DP (analytic Gaussian mechanism, Balle & Wang 2018, Thm. 8)."""
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    hi = 1.0
    while gaussian_delta(hi, epsilon) < delta:
        hi *= 2.0
    mu = brentq(lambda m: gaussian_delta(m, epsilon) - delta, 1e-12, hi, xtol=1e-14)
    return sensitivity / mu * (1 + 1e-12)


def gaussian_tradeoff(fpr, mu: float) -> np.ndarray:
    """Optimal FNR at a given FPR between N(0, 1) and N(mu, 1): Phi(Phi^-1(1 - FPR) - mu).

    The trade-off function G_mu of mu-Gaussian DP (Dong, Roth & Su 2022, Sec. 2.3); it is the exact FPR/FNR
    frontier of the Gaussian mechanism with mu = Delta / sigma along the direction f(D') - f(D).
    """
    fpr = np.asarray(fpr, dtype=np.float64)
    return ndtr(ndtri(1.0 - fpr) - mu)
