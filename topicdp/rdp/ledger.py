"""A ledger of heterogeneous releases and their total (epsilon, delta).

Entries are Gaussian (sigma, L2 sensitivity, count), discrete Gaussian (integer scale and sensitivity
in grid units, count), Laplace (scale, L1 sensitivity), pure epsilon-DP, or "approx" releases known only
by an (epsilon, delta) pair. Totals, all valid under adaptive composition:

``"rdp"``
    Sum the RDP curves of every RDP-describable entry (Gaussian, discrete Gaussian, Laplace, pure;
    Mironov 2017, Prop. 1) and convert the sum with the improved conversion at the best continuous order
    (:func:`topicdp.rdp.rdp_to_dp`) at ``delta' = delta - sum(approx deltas)``; then add the approx
    entries by basic composition (Dwork & Roth 2014, Thm. 3.16): the RDP part is (eps', delta')-DP,
    so the whole is (eps' + sum eps_i, delta' + sum delta_i) = (total, delta)-DP. Requires
    ``delta > sum(approx deltas)`` when any RDP entry is present.
``"simple"``
    Basic composition of per-entry guarantees: sum of epsilons, sum of deltas. Laplace entries are
    ``sensitivity/scale``-DP, pure entries are what they say, approx entries use their own pair, and
    the remaining budget ``delta - sum(approx deltas)`` is split *equally* among the Gaussian and
    discrete Gaussian entries. Each Gaussian entry (all of its ``count`` releases together, one Gaussian
    with sensitivity ``D sqrt(count)``) is converted at its share with the exact profile (Balle & Wang
    2018, Thm. 8), the tightest per-entry conversion; each discrete Gaussian entry converts its own RDP
    curve ``alpha rho`` (the improved conversion, Canonne, Kamath & Steinke 2020, Prop. 12), because the
    continuous exact profile is not proven for the multivariate discrete Gaussian.
``"exact"`` (all entries continuous Gaussian)
    Gaussians compose exactly into ``mu``-GDP with ``mu = sqrt(sum_i count_i (D_i/sigma_i)^2)``
    (Dong, Roth & Su 2022, Cor. 3.3); epsilon is the inverse of its exact profile. Not offered as soon as
    any other entry is present — in particular a discrete Gaussian, whose privacy profile is proven only
    in one dimension (Canonne, Kamath & Steinke 2020, Thm. 7).
``"best"``
    The smallest of the applicable totals above (each is valid, so their minimum is).

Discrete Gaussian entries. Canonne, Kamath & Steinke (2020, "The discrete Gaussian for differential
privacy", Thm. 4 with additivity of Renyi divergences over independent coordinates) show that adding
i.i.d. ``N_Z(0, s^2)`` noise to an integer query of L2 sensitivity ``Delta^Z`` is ``rho``-zCDP with
``rho = (Delta^Z)^2 / (2 s^2)``. Recording such a release as a continuous Gaussian with
``(sigma, Delta) = (s g, Delta)`` on a grid of step ``g`` would understate ``rho`` whenever
``Delta^Z > Delta / g`` (rounding to the grid inflates the sensitivity), so the ledger takes ``s`` and
``Delta^Z`` themselves.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Union

import numpy as np
from numpy.typing import ArrayLike

from topicdp._validation import check_delta, check_epsilon, check_option, check_real

from ._checks import as_output, check_count, check_orders, check_sensitivity, check_sigma
from .conversions import rdp_to_dp
from .curves import laplace_rdp, pure_dp_rdp
from .gaussian import gdp_epsilon

LEDGER_METHODS = ("rdp", "simple", "exact", "best")


@dataclass(frozen=True)
class GaussianEntry:
    """``count`` releases with Gaussian noise of std ``sigma`` and L2 sensitivity ``sensitivity``."""

    name: str
    sigma: float
    sensitivity: float
    count: int = 1
    kind: str = "gaussian"

    @property
    def mu(self) -> float:
        """GDP parameter ``sensitivity sqrt(count) / sigma`` (Dong, Roth & Su 2022, Cor. 3.3)."""
        return self.sensitivity * math.sqrt(self.count) / self.sigma

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """``count alpha D^2 / (2 sigma^2)`` (Mironov 2017, Table II and Prop. 1)."""
        return alpha * (0.5 * self.mu * self.mu)


@dataclass(frozen=True)
class DiscreteGaussianEntry:
    """``count`` discrete Gaussian releases: noise ``N_Z(0, scale_units^2)`` on an integer query whose L2
    sensitivity is ``sensitivity_units`` (both in grid units; see the module docstring)."""

    name: str
    scale_units: float
    sensitivity_units: float
    count: int = 1
    kind: str = "discrete-gaussian"

    @property
    def rho(self) -> float:
        """``count (Delta^Z)^2 / (2 s^2)`` (Canonne, Kamath & Steinke 2020, Thm. 4; zCDP adds up)."""
        return self.count * (self.sensitivity_units / self.scale_units) ** 2 / 2.0

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """``alpha rho`` (rho-zCDP, Bun & Steinke 2016, Def. 1.1)."""
        return alpha * self.rho


@dataclass(frozen=True)
class LaplaceEntry:
    """One release with Laplace noise of scale ``scale`` and L1 sensitivity ``sensitivity``."""

    name: str
    scale: float
    sensitivity: float
    kind: str = "laplace"

    @property
    def pure_epsilon(self) -> float:
        """``sensitivity / scale`` (Dwork & Roth 2014, Thm. 3.6)."""
        return self.sensitivity / self.scale

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """Mironov 2017, Table II (see :func:`topicdp.rdp.laplace_rdp`)."""
        return np.asarray(laplace_rdp(alpha, self.scale, self.sensitivity))


@dataclass(frozen=True)
class PureEntry:
    """A release known to be ``epsilon``-DP."""

    name: str
    epsilon: float
    kind: str = "pure"

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """``min(epsilon, alpha epsilon^2 / 2)`` (see :func:`topicdp.rdp.pure_dp_rdp`)."""
        return np.asarray(pure_dp_rdp(alpha, self.epsilon))


@dataclass(frozen=True)
class ApproxEntry:
    """A release known only to be (epsilon, delta)-DP; it has no RDP curve."""

    name: str
    epsilon: float
    delta: float
    kind: str = "approx"


Entry = Union[GaussianEntry, DiscreteGaussianEntry, LaplaceEntry, PureEntry, ApproxEntry]


@dataclass
class PrivacyLedger:
    """Every release made from one dataset, and their total privacy cost.

    Examples
    --------
    >>> ledger = PrivacyLedger()
    >>> for i in range(10):
    ...     ledger.add_gaussian(f"round {i}", sigma=4.0, sensitivity=1.0)
    >>> ledger.add_laplace("document count", scale=10.0, sensitivity=1.0)
    >>> {m: round(v, 2) for m, v in ledger.totals(1e-5).items()}
    {'rdp': 3.65, 'simple': 10.71, 'best': 3.65}
    """

    _entries: List[Entry] = field(default_factory=list)

    # -- recording -----------------------------------------------------------------------------------

    def add_gaussian(self, name: str, sigma: float, sensitivity: float, count: int = 1) -> None:
        """Record ``count`` Gaussian releases (std ``sigma > 0``, L2 sensitivity ``>= 0``)."""
        self._entries.append(GaussianEntry(_check_name(name), check_sigma(sigma),
                                           check_sensitivity(sensitivity, allow_zero=True),
                                           check_count(count)))

    def add_discrete_gaussian(self, name: str, scale_units: float, sensitivity_units: float,
                              count: int = 1) -> None:
        """Record ``count`` discrete Gaussian releases: integer noise scale ``scale_units > 0`` and the L2
        sensitivity of the rounded query, ``sensitivity_units >= 0``, both in grid units (e.g.
        :class:`topicdp.mechanisms.SecureRelease` ``.scale_units`` and ``.sensitivity_units``)."""
        self._entries.append(DiscreteGaussianEntry(_check_name(name), check_sigma(scale_units, "scale_units"),
                                                   check_sensitivity(sensitivity_units, allow_zero=True),
                                                   check_count(count)))

    def add_laplace(self, name: str, scale: float, sensitivity: float) -> None:
        """Record one Laplace release (scale ``> 0``, L1 sensitivity ``>= 0``)."""
        self._entries.append(LaplaceEntry(_check_name(name), check_sigma(scale, "scale"),
                                          check_sensitivity(sensitivity, allow_zero=True)))

    def add_pure(self, name: str, epsilon: float) -> None:
        """Record an epsilon-DP release (``epsilon > 0``)."""
        self._entries.append(PureEntry(_check_name(name), check_epsilon(epsilon)))

    def add_approx(self, name: str, epsilon: float, delta: float) -> None:
        """Record a release known only as (epsilon, delta)-DP (``epsilon >= 0``, ``0 <= delta < 1``)."""
        self._entries.append(ApproxEntry(_check_name(name),
                                         check_real(epsilon, "epsilon", low=0.0, low_open=False),
                                         check_real(delta, "delta", low=0.0, high=1.0, low_open=False)))

    # -- reading ---------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> List[Dict[str, Union[str, float, int]]]:
        """The recorded releases as JSON-serialisable dicts (``kind``, ``name`` and parameters)."""
        return [asdict(e) for e in self._entries]

    def rdp(self, alpha: ArrayLike):
        """Total RDP curve of the RDP-describable entries (approx entries are not included)."""
        a = check_orders(alpha)
        total = np.zeros_like(a)
        for e in self._entries:
            if not isinstance(e, ApproxEntry):
                total = total + e.rdp(a)
        return as_output(total, alpha)

    def epsilon(self, delta: float, method: str = "rdp") -> float:
        """Total epsilon of all entries at total ``delta``; see the module docstring for ``method``.

        Parameters
        ----------
        delta : float
            Total delta in (0, 1), including the deltas of approx entries.
        method : {"rdp", "simple", "exact", "best"}, default "rdp"

        Returns
        -------
        float
            epsilon >= 0 (``0.0`` for an empty ledger).
        """
        delta = check_delta(delta)
        method = check_option(method, "method", LEDGER_METHODS)
        if method == "rdp":
            return self._epsilon_rdp(delta)
        if method == "simple":
            return self._epsilon_simple(delta)
        if method == "exact":
            return self._epsilon_exact(delta)
        totals = [self._epsilon_rdp(delta), self._epsilon_simple(delta)]
        if self._all_gaussian():
            totals.append(self._epsilon_exact(delta))
        return min(totals)

    def totals(self, delta: float) -> Dict[str, float]:
        """Total epsilon by every applicable method, for the privacy report."""
        methods = [m for m in LEDGER_METHODS if m != "exact" or self._all_gaussian()]
        return {m: self.epsilon(delta, m) for m in methods}

    # -- the totals ----------------------------------------------------------------------------------

    def _approx_totals(self):
        approx = [e for e in self._entries if isinstance(e, ApproxEntry)]
        return sum(e.epsilon for e in approx), sum(e.delta for e in approx)

    def _remaining_delta(self, delta: float, needed: bool) -> float:
        eps_a, delta_a = self._approx_totals()
        remaining = delta - delta_a
        if remaining < 0.0 or (needed and remaining <= 0.0):
            raise ValueError(f"delta must exceed the approx entries' total delta {delta_a:g} "
                             f"(the rest pays for the Gaussian/RDP entries), got {delta:g}")
        return remaining

    def _epsilon_rdp(self, delta: float) -> float:
        has_rdp = any(not isinstance(e, ApproxEntry) for e in self._entries)
        remaining = self._remaining_delta(delta, needed=has_rdp)
        eps = self._approx_totals()[0]
        if has_rdp:
            eps += rdp_to_dp(self.rdp, remaining, conversion="improved")[0]
        return eps

    def _epsilon_simple(self, delta: float) -> float:
        gaussians = [e for e in self._entries if isinstance(e, (GaussianEntry, DiscreteGaussianEntry))]
        remaining = self._remaining_delta(delta, needed=bool(gaussians))
        eps = self._approx_totals()[0]
        for e in self._entries:
            if isinstance(e, GaussianEntry):
                eps += gdp_epsilon(e.mu, remaining / len(gaussians))
            elif isinstance(e, DiscreteGaussianEntry):
                eps += rdp_to_dp(e.rdp, remaining / len(gaussians), conversion="improved")[0]
            elif isinstance(e, LaplaceEntry):
                eps += e.pure_epsilon
            elif isinstance(e, PureEntry):
                eps += e.epsilon
        return eps

    def _all_gaussian(self) -> bool:
        return all(isinstance(e, GaussianEntry) for e in self._entries)

    def _epsilon_exact(self, delta: float) -> float:
        if not self._all_gaussian():
            kinds = sorted({e.kind for e in self._entries if not isinstance(e, GaussianEntry)})
            raise ValueError("method='exact' requires every entry to be a continuous Gaussian; this ledger also has "
                             f"{', '.join(kinds)} entries (use 'rdp', 'simple' or 'best')")
        mu = math.sqrt(sum(e.mu ** 2 for e in self._entries))
        return gdp_epsilon(mu, delta) if mu > 0.0 else 0.0


def _check_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return name
