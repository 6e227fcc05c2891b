"""Rényi DP accounting and Gaussian noise calibration for ``topicdp``.

* :mod:`~topicdp.rdp.gaussian` -- the exact privacy profile of the Gaussian mechanism (Balle & Wang
  2018, Thm. 8; Gaussian DP of Dong, Roth & Su 2022).
* :mod:`~topicdp.rdp.curves` -- RDP curves of the Gaussian, Laplace and pure-DP mechanisms
  (Mironov 2017, Table II; Bun & Steinke 2016).
* :mod:`~topicdp.rdp.conversions` -- RDP -> (epsilon, delta) and back with the order optimised
  continuously (Canonne, Kamath & Steinke 2020, Prop. 12; Mironov 2017, Prop. 3), and TopicDP's
  Prop. 2 (target (epsilon, delta) -> RDP level at fixed alpha).
* :mod:`~topicdp.rdp.zcdp` -- zCDP helpers (Bun & Steinke 2016).
* :mod:`~topicdp.rdp.search` -- the package's one calibration search (:func:`smallest_meeting`: bracket,
  Brent's method, upward rounding until the evaluated cost meets the target); every calibration uses it.
* :mod:`~topicdp.rdp.calibration` -- sigma for a target (analytic, RDP, TopicDP's recipe), epsilon for a
  sigma, and :func:`calibrate_event` (dp-accounting's event-and-accountant calibration on that search).
* :mod:`~topicdp.rdp.ledger` -- :class:`PrivacyLedger`, totals over heterogeneous releases, random DP kept
  apart, an enforced budget, and the entries as a dp-accounting event.
"""

from .calibration import (
    CALIBRATION_METHODS,
    EPSILON_METHODS,
    PAPER_ALPHA,
    calibrate_all,
    calibrate_event,
    calibrate_gaussian,
    gaussian_epsilon,
)
from .conversions import CONVERSIONS, minimize_over_orders, rdp_to_delta, rdp_to_dp, topicdp_rdp_level
from .curves import gaussian_rdp, laplace_rdp, pure_dp_rdp
from .gaussian import gaussian_delta, gaussian_mu, gdp_delta, gdp_epsilon
from .ledger import (
    LEDGER_METHODS,
    ApproxEntry,
    Budget,
    BudgetExceededError,
    DiscreteGaussianEntry,
    EventEntry,
    GaussianEntry,
    LaplaceEntry,
    PrivacyLedger,
    PureEntry,
)
from .search import NoBracketError, smallest_meeting
from .zcdp import gaussian_zcdp, pure_dp_zcdp, zcdp_to_dp

__all__ = [
    "CALIBRATION_METHODS", "CONVERSIONS", "EPSILON_METHODS", "LEDGER_METHODS", "PAPER_ALPHA",
    "ApproxEntry", "Budget", "BudgetExceededError", "NoBracketError", "DiscreteGaussianEntry", "EventEntry", "GaussianEntry", "LaplaceEntry", "PrivacyLedger", "PureEntry",
    "calibrate_all", "calibrate_event", "calibrate_gaussian", "gaussian_delta", "gaussian_epsilon", "gaussian_mu",
    "gaussian_rdp", "gaussian_zcdp", "gdp_delta", "gdp_epsilon", "laplace_rdp", "minimize_over_orders",
    "pure_dp_rdp", "pure_dp_zcdp", "rdp_to_delta", "rdp_to_dp", "smallest_meeting", "topicdp_rdp_level", "zcdp_to_dp",
]
