"""Budget split over a configuration's releases, noise calibration, and the totals for the report.

Each Gaussian release (an edge) and each Laplace release (Procedure 1, configurations 3-4) gets the fraction
``split[name]`` of epsilon (:data:`DEFAULT_SPLITS`, normalised); the Procedure-1 bounds fail with probability
``delta * ptr_delta_fraction`` in all (default 10%). Calibrations (``"auto"``: ``"exact"`` for 1-2, ``"rdp"`` for 3-4):

* ``"exact"``: one noise multiplier z, ``sigma_i = Delta_i z / sqrt(w_i)``, so the Gaussian releases compose exactly
  (adaptively too) into one with ``mu = 1/z`` whatever the data-dependent sensitivities (Dong, Roth & Su 2022,
  "Gaussian differential privacy", JRSS-B, Cor. 3.3); z meets (epsilon, delta) by the exact profile (Balle & Wang
  2018, Thm. 8).
* ``"simple"``, the paper's: each release (eps_i, delta_i)-DP alone (Laplace scale ``Delta/eps_i``), composed simply.
* ``"rdp"``: the shared multiplier, z the smallest for which the RDP composition with the Laplace releases (Mironov
  2017, Table II), converted at delta less the Procedure-1 failure probabilities, then charged them, is within
  epsilon (:func:`topicdp.rdp.smallest_meeting`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..rdp import NoBracketError, PrivacyLedger, calibrate_gaussian, smallest_meeting
from ..rdp.ledger import ApproxEntry, GaussianEntry, LaplaceEntry

ACCOUNTING_METHODS = ("auto", "exact", "rdp", "simple")

#: default epsilon fractions per configuration (documented in :mod:`.configurations`)
DEFAULT_SPLITS: dict[int, dict[str, float]] = {
    1: {"e3": 0.5, "e4": 0.25, "e8": 0.25},
    2: {"e6": 0.5, "e8": 0.5},
    3: {"p1_gap": 0.05, "p1_norm": 0.05, "e7": 0.45, "e8": 0.45},
    4: {"p1_gap": 0.05, "p1_norm": 0.05, "e9": 0.45, "e8": 0.45},
}

PTR_DELTA_FRACTION = 0.1


def resolve_accounting(accounting: str, has_laplace: bool) -> str:
    """``"auto"`` -> ``"exact"`` without Laplace releases, ``"rdp"`` with; ``"exact"`` with them is refused."""
    if accounting == "auto":
        return "rdp" if has_laplace else "exact"
    if accounting == "exact" and has_laplace:
        raise ValueError("accounting='exact' composes Gaussian releases only; configurations 3-4 also make "
                         "Laplace releases (Procedure 1): use 'rdp', 'simple' or 'auto'")
    return accounting


@dataclass
class SpectralBudget:
    """Per-release budget for one fit. ``gaussian`` and ``laplace`` name the releases of each kind."""

    epsilon: float
    delta: float
    split: dict[str, float]
    gaussian: tuple[str, ...]
    laplace: tuple[str, ...]
    accounting: str = "rdp"
    ptr_delta_fraction: float = PTR_DELTA_FRACTION
    ledger: PrivacyLedger = field(default_factory=PrivacyLedger)
    releases: list = field(default_factory=list)

    def __post_init__(self) -> None:
        names = set(self.gaussian) | set(self.laplace)
        if set(self.split) != names:
            raise ValueError(f"split must have exactly the keys {sorted(names)}, got {sorted(self.split)}")
        vals = np.array([self.split[n] for n in sorted(names)], dtype=float)
        if not np.all(np.isfinite(vals)) or np.any(vals <= 0):
            raise ValueError(f"split fractions must be positive and finite, got {self.split}")
        self.split = {n: float(self.split[n] / vals.sum()) for n in names}
        self.accounting = resolve_accounting(self.accounting, bool(self.laplace))
        n_ptr = len(self.laplace)
        self.ptr_delta = self.delta * self.ptr_delta_fraction / n_ptr if n_ptr else 0.0
        self.gauss_delta = (self.delta - n_ptr * self.ptr_delta) / len(self.gaussian)
        self._z = {"rdp": self._noise_multiplier, "exact": self._exact_multiplier}.get(self.accounting, lambda: None)()

    def eps(self, name: str) -> float:
        return self.epsilon * self.split[name]

    def _noise_multiplier(self) -> float:
        """Smallest z with RDP total (Gaussians at multiplier z, Laplaces at their eps) <= epsilon, as evaluated."""
        def total(z: float) -> float:
            led = PrivacyLedger()
            led.add_gaussian("gauss", sigma=z, sensitivity=1.0)
            for name in self.laplace:
                led.add_laplace(name, scale=1.0 / self.eps(name), sensitivity=1.0)
                led.add_approx(name + " failure", 0.0, self.ptr_delta)
            return led.epsilon(self.delta, "rdp")

        # the package's one search from z = 1 (the total is non-increasing in z); no z when the Laplace releases
        # alone exceed the budget: the bracket fails (2**40 ~ 1e12)
        try:
            return smallest_meeting(total, self.epsilon, guess=1.0, max_expansions=40)
        except NoBracketError:
            raise ValueError("epsilon is too small for the Procedure-1 releases alone; raise epsilon") from None

    def _exact_multiplier(self) -> float:
        """z = 1/mu for the mu-GDP total that meets (epsilon, delta) exactly (all-Gaussian releases)."""
        return calibrate_gaussian(self.epsilon, self.delta, 1.0, method="analytic")

    def _multiplier(self, name: str) -> float:
        """sigma / sensitivity of Gaussian release ``name``: a function of the stated parameters only."""
        if self.accounting in ("rdp", "exact"):
            assert self._z is not None  # set for both in __init__
            return self._z / math.sqrt(self.split[name] / sum(self.split[g] for g in self.gaussian))
        return calibrate_gaussian(self.eps(name), self.gauss_delta, 1.0, method="analytic")

    def planned_entries(self) -> list:
        """The fit's ledger entries before any data is read, each release at sensitivity 1.

        Every Gaussian release's sigma is its (data-dependent) sensitivity times :meth:`_multiplier`, and every
        Procedure-1 release's Laplace scale is its sensitivity over its epsilon share, so these entries have
        the same RDP curves, GDP parameters and per-entry epsilons as the ones the fit records: a
        :class:`topicdp.rdp.PrivacyLedger` can check its budget against them before the fit starts.
        """
        entries: list = [GaussianEntry(name, self._multiplier(name), 1.0) for name in self.gaussian]
        for name in self.laplace:
            entries += [LaplaceEntry(name, 1.0 / self.eps(name), 1.0),
                        ApproxEntry(name + " failure", 0.0, self.ptr_delta)]
        return entries

    def gaussian_sigma(self, name: str, sensitivity: float, *, what: str = "") -> float:
        """Noise std for Gaussian release ``name`` with L2 sensitivity ``sensitivity``; records it."""
        if self.accounting in ("rdp", "exact"):
            sigma = sensitivity * self._multiplier(name)
        else:  # calibrated at this sensitivity, so that the exact profile holds as evaluated (rounded upward)
            sigma = calibrate_gaussian(self.eps(name), self.gauss_delta, sensitivity, method="analytic")
        self.ledger.add_gaussian(name, sigma=sigma, sensitivity=sensitivity)
        self.releases.append({"name": name, "kind": "gaussian", "what": what, "sensitivity": sensitivity,
                              "sigma": sigma, "epsilon_share": self.eps(name), "delta_share": self.gauss_delta})
        return sigma

    def laplace_epsilon(self, name: str) -> tuple[float, float]:
        """(epsilon, failure probability) for Procedure-1 release ``name``."""
        return self.eps(name), self.ptr_delta

    def record_laplace(self, bound, what: str = "") -> None:
        self.ledger.add_laplace(bound.name, scale=bound.scale, sensitivity=bound.sensitivity)
        self.ledger.add_approx(bound.name + " failure", 0.0, bound.delta)
        self.releases.append({"name": bound.name, "kind": "laplace", "what": what, "sensitivity": bound.sensitivity,
                              "scale": bound.scale, "epsilon_share": bound.epsilon,
                              "failure_probability": bound.delta})

    def totals(self) -> dict[str, float]:
        """Total epsilon at this delta by each valid method (``rdp``, ``simple``, ``best``)."""
        return self.ledger.totals(self.delta)
