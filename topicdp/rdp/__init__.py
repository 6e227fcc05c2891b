"""Rényi DP accounting and Gaussian noise calibration: the exact Gaussian profile (:mod:`.gaussian`), RDP curves and
zCDP (:mod:`.curves`), conversions with the order optimised continuously (:mod:`.conversions`), the
one calibration search (:mod:`.search`) and the calibrations on it (:mod:`.calibration`), and the ledger of
releases with its persisted file (:mod:`.ledger`, :mod:`.ledger_file`)."""

from .calibration import (CALIBRATION_METHODS, EPSILON_METHODS, PAPER_ALPHA, calibrate_all, calibrate_event,
                          calibrate_gaussian, gaussian_epsilon)
from .conversions import CONVERSIONS, minimize_over_orders, rdp_to_dp, topicdp_rdp_level
from .curves import laplace_rdp, pure_dp_rdp, zcdp_to_dp
from .gaussian import gaussian_delta, gaussian_mu, gdp_delta, gdp_epsilon
from .ledger import (LEDGER_METHODS, ApproxEntry, Budget, BudgetExceededError, DiscreteGaussianEntry, EventEntry,
                     GaussianEntry, LaplaceEntry, PrivacyLedger, PureEntry)
from .search import NoBracketError, smallest_meeting

__all__ = [
    "CALIBRATION_METHODS", "CONVERSIONS", "EPSILON_METHODS", "LEDGER_METHODS", "PAPER_ALPHA",
    "ApproxEntry", "Budget", "BudgetExceededError", "NoBracketError", "DiscreteGaussianEntry", "EventEntry",
    "GaussianEntry", "LaplaceEntry", "PrivacyLedger", "PureEntry",
    "calibrate_all", "calibrate_event", "calibrate_gaussian", "gaussian_delta", "gaussian_epsilon", "gaussian_mu",
    "gdp_delta", "gdp_epsilon", "laplace_rdp", "minimize_over_orders",
    "pure_dp_rdp", "rdp_to_dp", "smallest_meeting", "topicdp_rdp_level", "zcdp_to_dp",
]
