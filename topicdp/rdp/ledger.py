"""A ledger of heterogeneous releases and their total (epsilon, delta), valid under adaptive composition.

Entries: Gaussian, discrete Gaussian (in grid units, ``(Delta^Z)^2/(2 s^2)``-zCDP, Canonne, Kamath & Steinke 2020,
Thm. 4), Laplace, pure, approx (epsilon, delta) only, and dp-accounting events. Totals: ``"rdp"`` sums the RDP
curves (Mironov 2017, Prop. 1), converts at ``delta - sum(approx deltas)`` (CKS 2020, Prop. 12) and adds the approx
entries (Dwork & Roth 2014, Thm. 3.16); ``"simple"`` is basic composition, that delta split equally among the
Gaussian-like entries (a Gaussian by its exact profile, Balle & Wang 2018, Thm. 8; a discrete Gaussian by its RDP
curve, its exact profile proven in one dimension only); ``"exact"`` (continuous Gaussians only) is
``sqrt(sum count_i (D_i/sigma_i)^2)``-GDP (Dong, Roth & Su 2022, Cor. 3.3); ``"best"`` the smallest applicable.

Random DP. An entry with a float ``gamma`` is (epsilon, delta, gamma)-random DP with respect to P (Rubinstein & Aldà
2017; TopicDP, Def. 4 and Thm. 1), not DP. ``scope="dp"`` composes the DP entries; ``scope="all"`` every entry,
holding with probability at least ``1 - sum gamma_i`` over the pair drawn from P (union bound: on the event that
every sampled sensitivity bounds the pair's distance, the composition theorems hold pair by pair). Different Ps,
units or neighbour relations (replace-one does not imply add/remove) are refused. ``budget=(epsilon, delta)``
refuses (:class:`BudgetExceededError`) an entry taking the ``scope="all"`` total over it; a persisted ledger
(:meth:`PrivacyLedger.open`) charges DP entries only.

Partitions. Entries of one ``partitioning`` (:func:`partitioning_key`) and different ``partition`` labels read
disjoint documents and compose in parallel at document level with add/remove neighbours (McSherry 2009, Thm. 4),
partitionings sequentially: a total is the worst combination of one part per partitioning
(:func:`worst_combination`) or, past :data:`MAX_COMBINATIONS`, each partitioning's worst part term by term, which
bounds every combination. A partition without partitioning (legacy) composes sequentially with every other label.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from topicdp._validation import check_delta, check_epsilon, check_option, check_real

from ._checks import as_output, check_count, check_orders, check_sensitivity, check_sigma
from .conversions import rdp_to_dp
from .curves import laplace_rdp, pure_dp_rdp
from .gaussian import gdp_epsilon

from .ledger_file import LEDGER_METHODS, Budget, LedgerFile, LedgerFileError, entry_to_json, register_kinds
from .partitions import (MAX_COMBINATIONS, part_key, partitioning_key, worst_combination,  # noqa: F401 (re-exported)
                         worst_sum)

from .._names import NEIGHBOURS, UNITS

SCOPES = ("dp", "all")
#: relative slack of budget comparisons (calibrations meet their target to about 1e-12)
_BUDGET_RTOL = 1e-9


@dataclass(frozen=True)
class _Labels:
    """What an entry's guarantee is about: ``gamma`` (None: DP, else random DP), the sampling distribution P,
    unit, neighbours, the part of the data read and the partitioning that made it (``None``: not stated)."""

    gamma: Optional[float] = field(default=None, kw_only=True)
    distribution: Optional[str] = field(default=None, kw_only=True)
    unit: Optional[str] = field(default=None, kw_only=True)
    neighbours: Optional[str] = field(default=None, kw_only=True)
    partition: Optional[str] = field(default=None, kw_only=True)
    partitioning: Optional[str] = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.partitioning is not None and (not isinstance(self.partitioning, str) or not self.partitioning
                                              or self.partition is None):
            raise ValueError(f"partitioning must be a non-empty string naming how the data was split, given with the "
                             f"partition it labels; got partitioning {self.partitioning!r}, partition "
                             f"{self.partition!r}")
        if self.partition is not None and (not isinstance(self.partition, str) or not self.partition):
            raise ValueError(f"partition must be a non-empty label of a part of the data, got {self.partition!r}")
        if self.partition is not None and (self.unit, self.neighbours) != ("document", "add-remove"):
            raise ValueError(f"partition {self.partition!r}: releases of disjoint parts compose in parallel for "
                             "unit 'document' with 'add-remove' neighbours (one document is in one part); got unit "
                             f"{self.unit!r}, neighbours {self.neighbours!r}")
        if self.gamma is not None:
            check_real(self.gamma, "gamma", low=0.0, high=1.0, low_open=False, high_open=False)
        elif self.distribution is not None:
            raise ValueError("distribution describes the P of a random-DP entry; give gamma too")
        for name, options in (("unit", UNITS), ("neighbours", NEIGHBOURS)):
            if getattr(self, name) is not None:
                check_option(getattr(self, name), name, options)

    def dp_event(self):
        """No dp-accounting event (pure and approx releases): the accountants refuse it, never mis-account it."""
        import dp_accounting as dpa

        return dpa.UnsupportedDpEvent()


@dataclass(frozen=True)
class GaussianEntry(_Labels):
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

    def dp_event(self):
        import dp_accounting as dpa

        if self.sensitivity == 0.0:
            return dpa.NoOpDpEvent()
        event = dpa.GaussianDpEvent(self.sigma / self.sensitivity)
        return event if self.count == 1 else dpa.SelfComposedDpEvent(event, self.count)


@dataclass(frozen=True)
class DiscreteGaussianEntry(_Labels):
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

    def dp_event(self):
        import dp_accounting as dpa

        return dpa.ZCDpEvent(self.rho)


@dataclass(frozen=True)
class LaplaceEntry(_Labels):
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

    def dp_event(self):
        import dp_accounting as dpa

        return dpa.NoOpDpEvent() if self.sensitivity == 0.0 else dpa.LaplaceDpEvent(self.scale / self.sensitivity)


@dataclass(frozen=True)
class PureEntry(_Labels):
    """A release known to be ``epsilon``-DP."""

    name: str
    epsilon: float
    kind: str = "pure"

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """``min(epsilon, alpha epsilon^2 / 2)`` (see :func:`topicdp.rdp.pure_dp_rdp`)."""
        return np.asarray(pure_dp_rdp(alpha, self.epsilon))


@dataclass(frozen=True)
class ApproxEntry(_Labels):
    """A release known only to be (epsilon, delta)-DP; it has no RDP curve."""

    name: str
    epsilon: float
    delta: float
    kind: str = "approx"


@dataclass(frozen=True)
class EventEntry(_Labels):
    """A release described by a dp-accounting ``DpEvent``; its RDP curve is dp-accounting's RDP accountant's under
    ``neighbours`` (required: a subsampled event is accounted for one relation)."""

    name: str
    event: object
    kind: str = "dp-event"

    def __post_init__(self) -> None:
        super().__post_init__()
        from dp_accounting import dp_event

        if not isinstance(self.event, dp_event.DpEvent):
            raise ValueError(f"event must be a dp_accounting DpEvent, got {type(self.event).__name__}")
        if self.neighbours is None:
            raise ValueError("an EventEntry needs neighbours ('replace-one' or 'add-remove'): dp-accounting "
                             "accounts an event for one neighbour relation")
        if not dp_accountant(self.neighbours, orders=list(np.atleast_1d(np.array([2.0])))).supports(self.event):
            raise ValueError(f"dp-accounting's RDP accountant cannot account {self.event} under {self.neighbours}")

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """dp-accounting's RDP of the event at each order of ``alpha``."""
        acc = dp_accountant(self.neighbours, orders=list(np.atleast_1d(np.asarray(alpha, dtype=float))))
        with _quiet_absl():
            acc.compose(self.event)
        return np.asarray(acc.rdp, dtype=float).reshape(np.shape(alpha))

    def dp_event(self):
        return self.event


Entry = Union[GaussianEntry, DiscreteGaussianEntry, LaplaceEntry, PureEntry, ApproxEntry, EventEntry]
register_kinds(GaussianEntry, DiscreteGaussianEntry, LaplaceEntry, PureEntry, ApproxEntry, EventEntry)
_GAUSSIAN_LIKE = (GaussianEntry, DiscreteGaussianEntry, EventEntry)


class BudgetExceededError(ValueError):
    """A release would take a :class:`PrivacyLedger` over its budget; nothing was recorded. ``spent`` (before),
    ``requested`` (the release alone) and ``total`` are epsilons at the budget's delta (``inf`` when the deltas
    exceed it); ``budget`` and ``accounting`` are the ledger's."""

    def __init__(self, spent: float, requested: float, total: float, budget: Tuple[float, float],
                 accounting: str, names: Sequence[str]) -> None:
        self.spent, self.requested, self.total = spent, requested, total
        self.budget, self.accounting = budget, accounting
        super().__init__(
            f"privacy budget exceeded: {', '.join(names) or 'the release'} would bring the total epsilon to "
            f"{total:.6g} (spent {spent:.6g} + requested {requested:.6g} by {accounting!r} composition) at "
            f"delta={budget[1]:g}, over the budget epsilon={budget[0]:g}; nothing was released or recorded")


@dataclass
class PrivacyLedger:
    """Every release made from one dataset, their total privacy cost, and an optional enforced budget.

    Parameters
    ----------
    budget : Budget or (epsilon, delta), optional
        Refuse entries that would take the ``scope="all"`` total over it; ``None``: no limit.
    accounting : {"rdp", "simple", "exact", "best"}, default "best"
        The total the budget is checked against (module docstring).

    Examples
    --------
    >>> ledger = PrivacyLedger()
    >>> for i in range(10):
    ...     ledger.add_gaussian(f"round {i}", sigma=4.0, sensitivity=1.0)
    >>> ledger.add_laplace("document count", scale=10.0, sensitivity=1.0)
    >>> {m: round(v, 2) for m, v in ledger.totals(1e-5).items()}
    {'rdp': 3.65, 'simple': 10.71, 'best': 3.65}
    >>> capped = PrivacyLedger(budget=(1.0, 1e-6))
    >>> capped.add_gaussian("release 1", sigma=5.0, sensitivity=1.0)
    >>> capped.add_gaussian("release 2", sigma=1.0, sensitivity=1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    topicdp.rdp.ledger.BudgetExceededError: privacy budget exceeded: release 2 would bring ...
    """

    budget: Optional[Budget] = None
    accounting: str = "best"
    _entries: List[Entry] = field(default_factory=list)
    #: the file of a persisted ledger (:meth:`open`), else None
    file: Optional[LedgerFile] = field(default=None, repr=False, compare=False)

    @classmethod
    def open(cls, path: str, budget: Optional[Tuple[float, float]] = None, unit: Optional[str] = None,
             neighbours: Optional[str] = None, accounting: str = "best") -> "PrivacyLedger":
        """The ledger kept in the file ``path`` (one per dataset), its budget enforced across runs and processes.

        Opens ``path`` (its hash chain verified), or creates it when ``budget``, ``unit`` and ``neighbours`` are
        all given; given for an existing file, they must be the file's. The budget is a DP budget, charged with
        the DP entries only. Format and locking: :mod:`topicdp.rdp.ledger_file`.
        """
        accounting = check_option(accounting, "accounting", LEDGER_METHODS)
        store = LedgerFile(path)
        if not os.path.exists(store.path):
            if budget is None or unit is None or neighbours is None:
                raise FileNotFoundError(f"ledger: no such file: {store.path} (give budget, unit and neighbours "
                                        "to create it)")
            with contextlib.suppress(FileExistsError):  # another process created it meanwhile: open theirs
                LedgerFile.create(store.path, budget, unit, neighbours, accounting)
        state = store.state()
        header = state.header
        stated = {"budget": None if budget is None else [float(budget[0]), float(budget[1])], "unit": unit,
                  "neighbours": neighbours}
        for key, value in stated.items():
            if value is not None and value != header[key]:
                raise LedgerFileError(f"ledger {store.path} has {key} {header[key]!r}, not {value!r}; a ledger keeps "
                                      f"the {key} it was created with")
        ledger = cls(budget=state.budget, accounting=header["accounting"], file=store)
        store.refresh(ledger)
        return ledger

    def __post_init__(self) -> None:
        if self.budget is not None:
            self.budget = Budget.of(self.budget)
        self.accounting = check_option(self.accounting, "accounting", LEDGER_METHODS)

    # -- recording -----------------------------------------------------------------------------------

    def check(self, entries: Iterable[Entry]) -> None:
        """Raise :class:`BudgetExceededError` if recording ``entries`` would exceed the budget (or ValueError on
        mixed labels); records nothing."""
        entries = list(entries)
        if self.file is not None and not self.file._locked:
            self.file.refresh(self)  # what every run has spent by now
        self._check_labels(entries)
        if self.budget is None or not self._charged(entries):
            return
        eps_budget, delta = self.budget
        spent = self._budget_epsilon(self._charged(self._entries), delta)
        total = self._budget_epsilon(self._charged(self._entries + entries), delta)
        if total > eps_budget * (1.0 + _BUDGET_RTOL):
            raise BudgetExceededError(spent, self._budget_epsilon(entries, delta), total, self.budget,
                                      self.accounting, [e.name for e in entries])

    def record(self, entries: Iterable[Entry]) -> None:
        """Check (:meth:`check`) and append ``entries``: all of them or, on an error, none."""
        entries = list(entries)
        if self.file is not None:  # re-read, check and write under the file's lock
            self.file.record(self, entries)
            return
        self.check(entries)
        self._entries.extend(entries)

    def remaining(self) -> float:
        """Budget epsilon minus the charged total, floored at 0."""
        if self.budget is None:
            return math.inf
        return max(0.0, self.budget[0] - self._budget_epsilon(self._charged(self._entries), self.budget[1]))

    def _charged(self, entries: List[Entry]) -> List[Entry]:
        return entries if self.file is None else [e for e in entries if e.gamma is None]

    def _budget_epsilon(self, entries: List[Entry], delta: float) -> float:
        # 'exact' is undefined for a ledger with other entries: then the smallest valid total
        method = "best" if self.accounting == "exact" and not _all_gaussian(entries) else self.accounting
        try:
            return _epsilon(entries, delta, method)
        except ValueError:  # the approx entries' deltas alone exceed the budget's delta
            return math.inf

    def _check_labels(self, entries: List[Entry]) -> None:
        for attr in ("unit", "neighbours"):
            seen = {getattr(e, attr) for e in self._entries + entries} - {None}
            if len(seen) > 1:
                raise ValueError(f"a ledger composes releases under one {attr}; these entries mix "
                                 f"{sorted(seen)} (keep separate ledgers, or restate the releases for one {attr})")
        labels = {e.distribution for e in self._entries + entries if e.gamma is not None and e.distribution is not None}
        if len(labels) > 1:
            raise ValueError(f"random-DP entries compose with respect to one sampling distribution P; these name "
                             f"{sorted(labels)}")

    def add_gaussian(self, name: str, sigma: float, sensitivity: float, count: int = 1, **labels) -> None:
        """Record ``count`` Gaussian releases (std ``sigma > 0``, L2 sensitivity ``>= 0``)."""
        self.record([GaussianEntry(_check_name(name), check_sigma(sigma),
                                   check_sensitivity(sensitivity, allow_zero=True), check_count(count), **labels)])

    def add_discrete_gaussian(self, name: str, scale_units: float, sensitivity_units: float,
                              count: int = 1, **labels) -> None:
        """Record ``count`` discrete Gaussian releases, scale and L2 sensitivity in grid units (as in
        :class:`topicdp.mechanisms.SecureRelease`)."""
        self.record([DiscreteGaussianEntry(_check_name(name), check_sigma(scale_units, "scale_units"),
                                           check_sensitivity(sensitivity_units, allow_zero=True),
                                           check_count(count), **labels)])

    def add_laplace(self, name: str, scale: float, sensitivity: float, **labels) -> None:
        """Record one Laplace release (scale ``> 0``, L1 sensitivity ``>= 0``)."""
        self.record([LaplaceEntry(_check_name(name), check_sigma(scale, "scale"),
                                  check_sensitivity(sensitivity, allow_zero=True), **labels)])

    def add_pure(self, name: str, epsilon: float, **labels) -> None:
        """Record an epsilon-DP release (``epsilon > 0``)."""
        self.record([PureEntry(_check_name(name), check_epsilon(epsilon), **labels)])

    def add_approx(self, name: str, epsilon: float, delta: float, **labels) -> None:
        """Record a release known only as (epsilon, delta)-DP (``epsilon >= 0``, ``0 <= delta < 1``)."""
        self.record([ApproxEntry(_check_name(name), check_real(epsilon, "epsilon", low=0.0, low_open=False),
                                 check_real(delta, "delta", low=0.0, high=1.0, low_open=False), **labels)])

    def add_event(self, name: str, event, *, neighbours: str, **labels) -> None:
        """Record a release described by a dp-accounting ``DpEvent`` under ``neighbours``."""
        self.record([EventEntry(_check_name(name), event, neighbours=neighbours, **labels)])

    # -- reading ---------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def records(self) -> Tuple[Entry, ...]:
        """The recorded entries themselves (immutable), e.g. to record them in another ledger."""
        return tuple(self._entries)

    @property
    def gamma(self) -> float:
        """Sum of the random-DP entries' gammas: the failure probability of the ``scope="all"`` statement."""
        return float(min(1.0, sum(e.gamma for e in self._entries if e.gamma is not None)))

    def entries(self) -> List[Dict[str, Union[str, float, int]]]:
        """The recorded releases as JSON-serialisable dicts (kind, name, parameters, stated labels)."""
        return [{**entry_to_json(e, event=repr), **({"guarantee": "random-DP"} if e.gamma is not None else {})}
                for e in self._entries]

    def rdp(self, alpha: ArrayLike, scope: str = "dp"):
        """Total RDP curve of the RDP-describable entries in ``scope`` (approx entries are not included)."""
        return _rdp(self._select(scope), alpha)

    def epsilon(self, delta: float, method: str = "rdp", scope: str = "dp") -> float:
        """Total epsilon at total ``delta`` (approx deltas included) by ``method`` over ``scope`` (module
        docstring); ``0.0`` for an empty ledger."""
        delta = check_delta(delta)
        method = check_option(method, "method", LEDGER_METHODS)
        return _epsilon(self._select(scope), delta, method)

    def totals(self, delta: float, scope: str = "dp") -> Dict[str, float]:
        """Total epsilon by every applicable method, for the privacy report."""
        entries = self._select(scope)
        methods = [m for m in LEDGER_METHODS if m != "exact" or _all_gaussian(entries)]
        return {m: _epsilon(entries, check_delta(delta), m) for m in methods}

    def statement(self, delta: float) -> dict:
        """What the ledger guarantees at total ``delta`` (JSON): the DP totals, the random-DP totals over all
        entries with their summed ``gamma`` (when present), and the budget with what remains."""
        out: dict = {"delta": float(check_delta(delta)), "dp": self.totals(delta, "dp"),
                     "n_dp_entries": len(self._select("dp"))}
        n_random = len(self._entries) - out["n_dp_entries"]
        if n_random:
            out["random_dp"] = {"totals": self.totals(delta, "all"), "gamma": self.gamma, "n_entries": n_random,
                                "distribution": sorted({e.distribution for e in self._entries
                                                        if e.gamma is not None} - {None})}
        if self.budget is not None:
            out["budget"] = {"epsilon": self.budget[0], "delta": self.budget[1], "accounting": self.accounting,
                             "remaining_epsilon": self.remaining()}
        return out

    @property
    def neighbours(self) -> Optional[str]:
        """The neighbour relation stated by the entries (None when none states one)."""
        seen = {e.neighbours for e in self._entries} - {None}
        return seen.pop() if seen else None

    @property
    def unit(self) -> Optional[str]:
        """The privacy unit stated by the entries (None when none states one)."""
        seen = {e.unit for e in self._entries} - {None}
        return seen.pop() if seen else None

    def dp_event(self, scope: str = "dp"):
        """The entries in ``scope`` as one ``dp_accounting.ComposedDpEvent``.

        Noise multipliers are over each entry's own sensitivity, so account it under ``ADD_OR_REMOVE_ONE`` (the
        PLD accountant doubles a Gaussian's sensitivity under ``REPLACE_ONE``) unless an :class:`EventEntry`
        needs another relation. Pure and approx entries become ``UnsupportedDpEvent`` (refused, not mis-accounted).
        """
        import dp_accounting as dpa

        return dpa.ComposedDpEvent([e.dp_event() for e in self._select(scope)])

    def _select(self, scope: str) -> List[Entry]:
        scope = check_option(scope, "scope", SCOPES)
        return list(self._entries) if scope == "all" else [e for e in self._entries if e.gamma is None]


# -- the totals (functions of a list of entries) ------------------------------------------------------

def _rdp(entries: List[Entry], alpha: ArrayLike):
    a = check_orders(alpha)
    total = np.zeros_like(a)
    for e in entries:
        if not isinstance(e, ApproxEntry):
            total = total + e.rdp(a)
    return as_output(total, alpha)


def _convert(curve: Callable, on_grid: bool, delta: float) -> float:
    """``rdp_to_dp`` of ``curve``: over continuous orders, or on a grid when dp-accounting computes part of it."""
    if on_grid:
        from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

        # dp-accounting's grid, densified between its points and extended to large orders (small totals)
        base = np.asarray(DEFAULT_RDP_ORDERS, dtype=float)
        mids = np.sqrt(base[:-1] * base[1:])
        orders = np.unique(np.concatenate([base, mids, [1.01, 1.05, 1.1, 1.2, 512.0, 1024.0, 4096.0]]))
        return rdp_to_dp((orders, curve(orders)), delta, conversion="improved")[0]
    return rdp_to_dp(curve, delta, conversion="improved")[0]


def _approx_totals(entries: List[Entry]) -> Tuple[float, float]:
    approx = [e for e in entries if isinstance(e, ApproxEntry)]
    return sum(e.epsilon for e in approx), sum(e.delta for e in approx)


def _delta_left(common: List[Entry], groups: Groups, delta: float, needed: bool) -> float:
    """``delta`` less the approx entries' (the worst part of each partitioning): what the other entries use."""
    delta_a = worst_sum(common, groups, lambda es: _approx_totals(es)[1])
    remaining = delta - delta_a
    if remaining < 0.0 or (needed and remaining <= 0.0):
        where = "the worst part of each partitioning" if groups else "the rest pays for the Gaussian/RDP entries"
        raise ValueError(f"delta must exceed the approx entries' total delta {delta_a:g} ({where}), got {delta:g}")
    return remaining


def _epsilon(entries: List[Entry], delta: float, method: str) -> float:
    """The total of ``entries`` by ``method``: the worst combination of one part per partitioning."""
    def bound(common: List[Entry], groups: Groups) -> float:
        return _epsilon_bound(common, groups, delta, method)

    return worst_combination(entries, partition_of, lambda es: bound(es, []), signature=_signature, bound=bound)


def _simple_epsilon(e: Entry, share: float) -> float:
    """One entry's epsilon in basic composition (an approx entry's is counted by :func:`_approx_totals`)."""
    if isinstance(e, GaussianEntry):
        return gdp_epsilon(e.mu, share)
    if isinstance(e, (DiscreteGaussianEntry, EventEntry)):
        return _convert(lambda a: _rdp([e], a), isinstance(e, EventEntry), share)
    if isinstance(e, LaplaceEntry):
        return e.pure_epsilon
    if isinstance(e, PureEntry):
        return e.epsilon
    return 0.0


def _all_gaussian(entries: List[Entry]) -> bool:
    return all(isinstance(e, GaussianEntry) for e in entries)


# -- partitions: parallel composition within one partitioning, sequential across them ------------------------

def partition_of(e: Entry) -> Optional[Tuple[Hashable, str]]:
    """``(partitioning, part)`` of an entry, or None for one that read all the data."""
    return part_key(e.partition, e.partitioning)


def _signature(e: Entry) -> Hashable:
    """What an entry's cost depends on (everything but its name and labels of place)."""
    return repr(replace(e, name="", partition=None, partitioning=None))


Groups = List[List[List[Entry]]]


def _epsilon_bound(common: List[Entry], groups: Groups, delta: float, method: str) -> float:
    """``common`` and each partitioning's worst part, term by term: the sequential total without ``groups``, an
    upper bound of :func:`_epsilon` over every combination with them."""
    totals = {"rdp": _rdp_bound, "simple": _simple_bound, "exact": _exact_bound}
    if method != "best":
        return totals[method](common, groups, delta)
    gaussian = _all_gaussian(common + [e for parts in groups for part in parts for e in part])
    return min(totals[m](common, groups, delta) for m in ("rdp", "simple", "exact")[: 3 if gaussian else 2])


def _exact_bound(common: List[Entry], groups: Groups, delta: float) -> float:
    everything = common + [e for parts in groups for part in parts for e in part]
    if not _all_gaussian(everything):
        kinds = sorted({e.kind for e in everything if not isinstance(e, GaussianEntry)})
        raise ValueError("method='exact' requires every entry to be a continuous Gaussian; this ledger also has "
                         f"{', '.join(kinds)} entries (use 'rdp', 'simple' or 'best')")
    mu2 = worst_sum(common, groups, lambda es: sum(e.mu ** 2 for e in es if isinstance(e, GaussianEntry)))
    return gdp_epsilon(math.sqrt(mu2), delta) if mu2 > 0.0 else 0.0


def _rdp_bound(common: List[Entry], groups: Groups, delta: float) -> float:
    everything = common + [e for parts in groups for part in parts for e in part]
    eps_a = worst_sum(common, groups, lambda es: _approx_totals(es)[0])
    has_rdp = any(not isinstance(e, ApproxEntry) for e in everything)
    remaining = _delta_left(common, groups, delta, has_rdp)
    if not has_rdp:
        return eps_a

    def curve(a):
        return np.asarray(_rdp(common, a)) + sum(np.max([np.asarray(_rdp(part, a)) for part in parts], axis=0)
                                                 for parts in groups)

    return eps_a + _convert(curve, any(isinstance(e, EventEntry) for e in everything), remaining)


def _simple_bound(common: List[Entry], groups: Groups, delta: float) -> float:
    n_gaussians = worst_sum(common, groups, lambda es: float(sum(isinstance(e, _GAUSSIAN_LIKE) for e in es)))
    remaining = _delta_left(common, groups, delta, bool(n_gaussians))
    share = remaining / n_gaussians if n_gaussians else remaining  # the smallest share any combination gives
    return worst_sum(common, groups, lambda es: _approx_totals(es)[0] + sum(_simple_epsilon(e, share) for e in es))


def labelled(entries: Iterable[Entry], **labels) -> List[Entry]:
    """``entries`` with the given labels (``unit``, ``neighbours``, ``gamma``, ``distribution``, ``partition``,
    ``partitioning``) set."""
    return [replace(e, **labels) for e in entries]


def dp_accountant(neighbours: Optional[str], method: str = "rdp", orders: Optional[List[float]] = None):
    """A fresh dp-accounting accountant under ``neighbours``: RDP (on ``orders``, default its grid) or ``"pld"``."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    rel = (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if neighbours == "add-remove"
           else dpa.NeighboringRelation.REPLACE_ONE)
    if method == "pld":
        return pld_privacy_accountant.PLDAccountant(neighboring_relation=rel)
    return rdp_privacy_accountant.RdpAccountant(orders=orders, neighboring_relation=rel)


@contextlib.contextmanager
def _quiet_absl():
    """Silence dp-accounting's warnings for orders whose series fails to converge (dropping them is safe)."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _check_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return name
