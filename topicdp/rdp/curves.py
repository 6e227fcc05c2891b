"""Rényi DP curves ``alpha -> eps(alpha)`` of the mechanisms the toolkit releases with.

All functions accept a scalar order or an array of orders (``alpha >= 1``; order 1 is the KL limit)
and return a float or an ndarray accordingly. Curves of composed mechanisms add up pointwise
(Mironov 2017, "Rényi differential privacy", CSF, Prop. 1), which is what
:class:`topicdp.rdp.PrivacyLedger` does before converting with :func:`topicdp.rdp.rdp_to_dp`.
"""

from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from topicdp._validation import check_epsilon

from ._checks import as_output, check_orders, check_sensitivity, check_sigma


def gaussian_rdp(alpha: ArrayLike, sigma: float, sensitivity: float = 1.0) -> Union[float, np.ndarray]:
    """RDP of the Gaussian mechanism: ``eps(alpha) = alpha D^2 / (2 sigma^2)``.

    Mironov 2017, Table II (TopicDP, Thm. 2, derives the same divergence; Bun & Steinke 2016,
    Prop. 1.6, state it as ``D^2/(2 sigma^2)``-zCDP). ``count`` composed releases have ``count`` times
    this curve.

    Parameters
    ----------
    alpha : float or array_like
        Rényi order(s), ``>= 1``.
    sigma : float
        Noise standard deviation, ``> 0``.
    sensitivity : float, default 1.0
        L2 sensitivity ``D >= 0``.

    Returns
    -------
    float or ndarray
    """
    a = check_orders(alpha)
    sigma = check_sigma(sigma)
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    return as_output(a * (sensitivity / sigma) ** 2 / 2.0, alpha)


def laplace_rdp(alpha: ArrayLike, scale: float, sensitivity: float = 1.0) -> Union[float, np.ndarray]:
    """RDP of the Laplace mechanism with scale ``b`` (in units of the L1 sensitivity).

    Mironov 2017, Table II (derived in Prop. 6), with ``lam = scale / sensitivity``::

        eps(alpha) = 1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1)/lam}
                                      + (alpha-1)/(2alpha-1) e^{-alpha/lam} ).

    Factoring out ``e^{(alpha-1)/lam}`` gives the form evaluated here, stable for every order
    (no overflow for large ``alpha`` or ``1/lam``, no 0/0 as ``alpha -> 1``)::

        eps(alpha) = e + c * log1p(x)/x,  e = 1/lam,  c = expm1(-(2alpha-1) e)/(2alpha-1),
                     x = (alpha-1) c,

    with ``log1p(x)/x := 1`` at ``x = 0``; at ``alpha = 1`` this is the KL divergence
    ``e + expm1(-e)``. The curve increases to the pure-DP level ``e`` as ``alpha -> inf``.

    Parameters
    ----------
    alpha : float or array_like
        Rényi order(s), ``>= 1``.
    scale : float
        Laplace scale ``b > 0``.
    sensitivity : float, default 1.0
        L1 sensitivity ``>= 0``.

    Returns
    -------
    float or ndarray
    """
    a = check_orders(alpha)
    scale = check_sigma(scale, "scale")
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    e = sensitivity / scale
    c = np.expm1(-(2.0 * a - 1.0) * e) / (2.0 * a - 1.0)
    x = (a - 1.0) * c
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(x == 0.0, 1.0, np.log1p(x) / np.where(x == 0.0, 1.0, x))
    return as_output(np.minimum(e + c * ratio, e), alpha)


def pure_dp_rdp(alpha: ArrayLike, epsilon: float) -> Union[float, np.ndarray]:
    """RDP curve implied by pure epsilon-DP: ``min(epsilon, alpha epsilon^2 / 2)``.

    An epsilon-DP mechanism is (alpha, epsilon)-RDP for every alpha (Mironov 2017, Sec. III:
    epsilon-DP is (inf, epsilon)-RDP, and the Rényi divergence is non-decreasing in the order) and
    ``epsilon^2/2``-zCDP (Bun & Steinke 2016, "Concentrated differential privacy: simplifications,
    extensions, and lower bounds", TCC, Prop. 1.4), i.e. (alpha, alpha epsilon^2/2)-RDP; the minimum
    of the two holds. (Sharper: ``epsilon tanh(epsilon/2)``-zCDP, Cesar & Rogers 2021; not used, to
    stay with the textbook statement.)

    Parameters
    ----------
    alpha : float or array_like
        Rényi order(s), ``>= 1``.
    epsilon : float
        Pure-DP level, ``> 0``.
    """
    a = check_orders(alpha)
    epsilon = check_epsilon(epsilon)
    return as_output(np.minimum(epsilon, a * epsilon * epsilon / 2.0), alpha)
