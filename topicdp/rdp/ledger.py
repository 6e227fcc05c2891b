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

Guarantees: DP and random DP
----------------------------
Every entry keeps the kind of guarantee its release has. An entry with ``gamma=None`` is differentially
private. An entry with a float ``gamma`` is *(epsilon, delta, gamma)-random DP with respect to a
distribution P* (Rubinstein & Aldà 2017, "Pain-free random differential privacy with sensitivity
sampling"; Wang et al. 2022, TopicDP, Def. 4 and Thm. 1): its noise is calibrated to a sensitivity that
bounds the distance of a pair of neighbouring datasets drawn from P with probability at least
``1 - gamma`` (jointly over the sensitivity sample and the pair; TopicDP's sampled sensitivity). Such an
entry is *not* DP, and the ledger never adds it into a DP total:

* ``scope="dp"`` (the default of :meth:`PrivacyLedger.epsilon` and :meth:`PrivacyLedger.totals`) composes the
  DP entries only: a DP statement about those releases.
* ``scope="all"`` composes every entry, and the result is a random-DP statement: **with probability at
  least** ``1 - sum_i gamma_i`` over the neighbouring pair (D, D') drawn from P, the composition of *all*
  releases is (epsilon, delta)-indistinguishable on (D, D'). Proof: on the event that every random-DP
  entry's sampled sensitivity bounds the pair's distance (probability >= 1 - sum gamma_i by the union
  bound), each of those releases is a Gaussian (or other) mechanism with a true sensitivity bound *on that
  pair*; the DP entries satisfy their bounds on every pair; and the composition theorems behind each total
  are proved pair by pair (Rényi divergences of adaptively composed mechanisms add up, Mironov 2017,
  Prop. 1; so do GDP parameters in quadrature, Dong, Roth & Su 2022, Cor. 3.3; and basic composition,
  Dwork & Roth 2014, Thm. 3.16), so each total holds on that pair. The statement is with respect to one
  P shared by all random-DP entries, so the ledger refuses random-DP entries whose ``distribution``
  labels differ.

:meth:`PrivacyLedger.statement` returns both, with ``gamma`` the sum of the entries' gammas.

Budget
------
``PrivacyLedger(budget=(epsilon, delta))`` refuses, with :class:`BudgetExceededError`, any entry that
would take the total over *all* entries (``scope="all"``: random-DP releases spend budget too) at the
budget's delta, by the ledger's ``accounting`` method, above the budget's epsilon.
:meth:`PrivacyLedger.check` answers that question without recording anything; every producer of a release
in topicdp calls it before it reads private data beyond its calibration or draws noise, and records its
entries (:meth:`PrivacyLedger.record`) after the release.

:meth:`PrivacyLedger.open` keeps the ledger in a file, one per dataset, across runs and processes
(:mod:`topicdp.rdp.ledger_file`). Its budget is a DP budget: charged with the DP entries only, while random-DP
entries are recorded in their own scope, never spending or fitting within it.

Partitions (parallel composition)
---------------------------------
An entry labelled ``partition=p`` read only the part ``p`` of the data; ``partitioning=P`` names the function that
split the data into disjoint parts: the corpus (the SHA-256 of its file's bytes), the period kind (month, quarter)
and the date field, as one key (:func:`partitioning_key`). Under document-level add/remove neighbours a document
lies in at most one part of a partitioning, so the releases of the other parts do not change with it: the parts of
one partitioning compose in parallel (McSherry 2009, "Privacy integrated queries", Thm. 4: mechanisms applied to
disjoint subsets of the data are together as private as the worst of them). The label is refused at the user
level, where one user's documents span parts, and under replace-one, where a replaced document may move to another
part and change two of them.

Parts of *different* partitionings are not disjoint: a May document is in the part "2004-05" of a monthly series
and in the part "2004Q2" of a quarterly one, and in one part of a series by another date field, or of a series of
another corpus file. A document lies in (at most) one part of each partitioning, and any combination of one part
per partitioning may hold it, so every total is the largest, over every combination of one part per partitioning,
of the sequential composition (each total as above) of the unlabelled entries and the entries of the combination's
parts (:func:`worst_combination`; one rule for the ledger in memory, the persisted ledger's budget check and its
summary). Entries of the same part (the same series run twice) compose sequentially within it. When the product of
the numbers of parts exceeds :data:`MAX_COMBINATIONS` (after parts whose entries are a sub-multiset of another part's
are dropped: composition never decreases by adding an entry), the total is bounded instead by the sequential
composition of each partitioning's worst part taken order by order: the pointwise largest RDP curve over the parts,
the largest sum of approx epsilons and deltas, the largest GDP ``mu^2`` and, for basic composition, the largest
sum of per-entry epsilons at the smallest delta share; each is at least what any combination spends, so the bound
is valid (and exact for all-Gaussian ledgers by exact GDP composition, whose ``mu^2`` add up).

An entry with a ``partition`` but no ``partitioning`` (written before partitionings were named) is its own legacy
partitioning of an unknown corpus: it composes in parallel with nothing, i.e. sequentially with every entry of
another label. That over-counts an old series, never under-counts it.

Unit and neighbour relation
---------------------------
Entries may carry the privacy ``unit`` ("user" or "document") and ``neighbours`` relation
("replace-one" or "add-remove") of their guarantee. Composition theorems need one relation: a
replace-one guarantee does not imply an add/remove one, and an add/remove guarantee gives replace-one only
at twice the cost (group privacy). The ledger therefore refuses an entry whose labels differ from those
already recorded; unlabelled entries (``None``) are taken to hold for the recorded relation.

dp-accounting
-------------
:meth:`PrivacyLedger.dp_event` states the entries as one ``dp_accounting.ComposedDpEvent`` (Gaussian ->
``GaussianDpEvent(sigma/sensitivity)``, Laplace -> ``LaplaceDpEvent(scale/sensitivity)``, discrete Gaussian
-> ``ZCDpEvent(rho)``, pure and approx entries -> ``UnsupportedDpEvent``, which dp-accounting's accountants
refuse rather than mis-account), and :class:`EventEntry` records a release described only by a
dp-accounting event (e.g. DP-SVI's Poisson-subsampled Gaussian). An event entry's RDP curve comes from
dp-accounting's RDP accountant on its order grid; a ledger holding one converts its RDP total on that grid
(:data:`EVENT_ORDERS`) instead of over continuous orders.

Discrete Gaussian entries. Canonne, Kamath & Steinke (2020, "The discrete Gaussian for differential
privacy", Thm. 4 with additivity of Renyi divergences over independent coordinates) show that adding
i.i.d. ``N_Z(0, s^2)`` noise to an integer query of L2 sensitivity ``Delta^Z`` is ``rho``-zCDP with
``rho = (Delta^Z)^2 / (2 s^2)``. Recording such a release as a continuous Gaussian with
``(sigma, Delta) = (s g, Delta)`` on a grid of step ``g`` would understate ``rho`` whenever
``Delta^Z > Delta / g`` (rounding to the grid inflates the sensitivity), so the ledger takes ``s`` and
``Delta^Z`` themselves.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import Callable, Dict, Hashable, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from topicdp._validation import check_delta, check_epsilon, check_option, check_real

from ._checks import as_output, check_count, check_orders, check_sensitivity, check_sigma
from .conversions import rdp_to_dp
from .curves import laplace_rdp, pure_dp_rdp
from .gaussian import gdp_epsilon

from .ledger_file import LedgerFile, register_kinds
from .partitions import MAX_COMBINATIONS, partitioning_key, worst_combination  # noqa: F401 (re-exported)

LEDGER_METHODS = ("rdp", "simple", "exact", "best")
SCOPES = ("dp", "all")
from .._names import NEIGHBOURS as _NEIGHBOURS  # noqa: E402
from .._names import UNITS as _UNITS  # noqa: E402
#: budget comparisons allow this relative slack: calibrations meet their target to about 1e-12, and a
#: release calibrated to exactly the remaining budget must not be refused for rounding
_BUDGET_RTOL = 1e-9


def _event_orders() -> np.ndarray:
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    # dp-accounting's grid, densified between its points and extended to large orders (small totals)
    base = np.asarray(DEFAULT_RDP_ORDERS, dtype=float)
    mids = np.sqrt(base[:-1] * base[1:])
    return np.unique(np.concatenate([base, mids, [1.01, 1.05, 1.1, 1.2, 512.0, 1024.0, 4096.0]]))


@dataclass(frozen=True)
class _Labels:
    """What every entry's guarantee is about (keyword-only; ``None`` = not stated)."""

    #: None: the release is DP; a float in [0, 1]: it is random DP with this failure probability
    gamma: Optional[float] = field(default=None, kw_only=True)
    #: the sampling distribution P of a random-DP entry (a short public description)
    distribution: Optional[str] = field(default=None, kw_only=True)
    unit: Optional[str] = field(default=None, kw_only=True)
    neighbours: Optional[str] = field(default=None, kw_only=True)
    #: the disjoint part of the data the release read (e.g. a period of documents); None: all of it
    partition: Optional[str] = field(default=None, kw_only=True)
    #: the function that split the data into the parts (:func:`partitioning_key`); None with a partition: legacy
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
        if self.unit is not None:
            check_option(self.unit, "unit", _UNITS)
        if self.neighbours is not None:
            check_option(self.neighbours, "neighbours", _NEIGHBOURS)

    @property
    def guarantee(self) -> str:
        """``"DP"`` or ``"random-DP"``."""
        return "DP" if self.gamma is None else "random-DP"


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

    def dp_event(self):
        import dp_accounting as dpa

        # dp-accounting has no event for a generic epsilon-DP mechanism; LaplaceDpEvent would be tighter
        # than what an arbitrary epsilon-DP release guarantees
        return dpa.UnsupportedDpEvent()


@dataclass(frozen=True)
class ApproxEntry(_Labels):
    """A release known only to be (epsilon, delta)-DP; it has no RDP curve."""

    name: str
    epsilon: float
    delta: float
    kind: str = "approx"

    def dp_event(self):
        import dp_accounting as dpa

        return dpa.UnsupportedDpEvent()


@dataclass(frozen=True)
class EventEntry(_Labels):
    """A release described by a dp-accounting ``DpEvent`` (e.g. T Poisson-subsampled Gaussian steps).

    ``neighbours`` is required: dp-accounting's accountants compute a subsampled event's RDP for one
    neighbour relation (``PoissonSampledDpEvent`` under add/remove, ``SampledWithoutReplacementDpEvent``
    under replace-one). Its RDP curve is dp-accounting's (their ``RdpAccountant``) at the orders asked for.
    """

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
        if not self._accountant(np.array([2.0])).supports(self.event):
            raise ValueError(f"dp-accounting's RDP accountant cannot account {self.event} under {self.neighbours}")

    def _accountant(self, orders: np.ndarray):
        import dp_accounting as dpa
        from dp_accounting.rdp import rdp_privacy_accountant

        rel = (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if self.neighbours == "add-remove"
               else dpa.NeighboringRelation.REPLACE_ONE)
        return rdp_privacy_accountant.RdpAccountant(orders=list(np.atleast_1d(orders)), neighboring_relation=rel)

    def rdp(self, alpha: np.ndarray) -> np.ndarray:
        """dp-accounting's RDP of the event at each order of ``alpha``."""
        acc = self._accountant(np.asarray(alpha, dtype=float))
        with _quiet_absl():
            acc.compose(self.event)
        return np.asarray(acc.rdp, dtype=float).reshape(np.shape(alpha))

    def dp_event(self):
        return self.event


Entry = Union[GaussianEntry, DiscreteGaussianEntry, LaplaceEntry, PureEntry, ApproxEntry, EventEntry]
register_kinds(GaussianEntry, DiscreteGaussianEntry, LaplaceEntry, PureEntry, ApproxEntry, EventEntry)
_GAUSSIAN_LIKE = (GaussianEntry, DiscreteGaussianEntry, EventEntry)


class BudgetExceededError(ValueError):
    """A release would take a :class:`PrivacyLedger` over its budget; nothing was recorded.

    Attributes
    ----------
    spent : float
        Total epsilon of the ledger's entries before the release (at the budget's delta).
    requested : float
        Epsilon of the refused release's entries alone (at the budget's delta; ``inf`` when their deltas alone
        exceed it).
    total : float
        What the total would have been (``inf`` when the deltas exceed the budget's).
    budget : (float, float)
        The ledger's (epsilon, delta).
    accounting : str
        The ledger's accounting method.
    """

    def __init__(self, spent: float, requested: float, total: float, budget: Tuple[float, float],
                 accounting: str, names: Sequence[str]) -> None:
        self.spent, self.requested, self.total = spent, requested, total
        self.budget, self.accounting = budget, accounting
        super().__init__(
            f"privacy budget exceeded: {', '.join(names) or 'the release'} would bring the total epsilon to "
            f"{total:.6g} (spent {spent:.6g} + requested {requested:.6g} by {accounting!r} composition) at "
            f"delta={budget[1]:g}, over the budget epsilon={budget[0]:g}; nothing was released or recorded")


class Budget(NamedTuple):
    """(epsilon, delta): the total a ledger keeps its releases under, a release request's total, or one step's
    share of it. A pair, so ``(epsilon, delta)`` is accepted wherever a Budget is."""

    epsilon: float
    delta: float

    def __str__(self) -> str:
        return f"epsilon={self.epsilon:g}, delta={self.delta:g}"

    @classmethod
    def of(cls, value) -> "Budget":
        """``value`` (a Budget or an (epsilon, delta) pair) as a checked Budget."""
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"budget must be a pair (epsilon, delta), got {value!r}")
        return cls(check_epsilon(value[0]), check_delta(value[1]))


@dataclass
class PrivacyLedger:
    """Every release made from one dataset, their total privacy cost, and an optional enforced budget.

    Parameters
    ----------
    budget : Budget or (epsilon, delta), optional
        Refuse entries that would take the total over every entry (``scope="all"``) at this delta above
        this epsilon (:class:`BudgetExceededError`). ``None``: record without limit.
    accounting : {"rdp", "simple", "exact", "best"}, default "best"
        The total the budget is checked against ("exact" applies to all-Gaussian ledgers only; "best" is
        the smallest valid one). See the module docstring.

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
        """The ledger kept in the file ``path``: one per dataset, its budget enforced across runs and processes.

        Opens ``path``, verifying its hash chain (a corrupted or truncated file is refused), or creates it when
        it does not exist and ``budget``, ``unit`` and ``neighbours`` are all given. Given for an existing file,
        they must be the file's (a ledger composes one unit and neighbour relation; its budget is set once).
        Its entries are every run's (a run that planned and never completed counts as planned); :meth:`check`
        re-reads the file, and :meth:`record` writes durably under the file's lock. Unlike an in-memory ledger,
        the budget is a DP budget: it is charged with the DP entries (``scope="dp"``); random-DP entries are
        recorded in their own scope and never spend or fit within it. See :mod:`topicdp.rdp.ledger_file` for the
        format, the locking (and what a network file system's locking does not give) and what the file is not:
        the owner's own record, not a defence against the owner.

        Parameters
        ----------
        path : str
            The ledger file.
        budget : (epsilon, delta), optional
            The dataset's total budget (to create; checked against an existing file's).
        unit : {"user", "document"}, optional
        neighbours : {"replace-one", "add-remove"}, optional
        accounting : {"rdp", "simple", "exact", "best"}, default "best"
            The total the budget is checked against (at creation).

        Returns
        -------
        PrivacyLedger
        """
        from .ledger_file import LedgerFileError

        accounting = check_option(accounting, "accounting", LEDGER_METHODS)
        store = LedgerFile(path)
        if not os.path.exists(store.path):
            if budget is None or unit is None or neighbours is None:
                raise FileNotFoundError(f"ledger: no such file: {store.path} (give budget, unit and neighbours "
                                        "to create it)")
            with contextlib.suppress(FileExistsError):  # another process created it meanwhile: open theirs
                LedgerFile.create(store.path, budget, unit, neighbours, accounting)
        header = store.state().header
        stated = {"budget": None if budget is None else [float(budget[0]), float(budget[1])], "unit": unit,
                  "neighbours": neighbours}
        for key, value in stated.items():
            if value is not None and value != header[key]:
                raise LedgerFileError(f"ledger {store.path} has {key} {header[key]!r}, not {value!r}; a ledger keeps "
                                      f"the {key} it was created with")
        ledger = cls(budget=Budget(float(header["budget"][0]), float(header["budget"][1])), accounting=header["accounting"])
        ledger.file = store
        store.refresh(ledger)
        return ledger

    def __post_init__(self) -> None:
        if self.budget is not None:
            self.budget = Budget.of(self.budget)
        self.accounting = check_option(self.accounting, "accounting", LEDGER_METHODS)

    # -- recording -----------------------------------------------------------------------------------

    def check(self, entries: Iterable[Entry]) -> None:
        """Raise :class:`BudgetExceededError` if recording ``entries`` would exceed the budget.

        Also refuses entries whose unit or neighbour relation differs from the recorded ones. Records
        nothing; a ledger without a budget accepts any (well-labelled) entries.
        """
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
        """Budget epsilon minus the total spent (``scope="all"``, or ``"dp"`` for a persisted ledger; the
        ledger's accounting), floored at 0."""
        if self.budget is None:
            return math.inf
        return max(0.0, self.budget[0] - self._budget_epsilon(self._charged(self._entries), self.budget[1]))

    def _charged(self, entries: List[Entry]) -> List[Entry]:
        """The entries the budget is charged with: all, or the DP ones for a persisted ledger (:meth:`open`)."""
        return entries if self.file is None else [e for e in entries if e.gamma is None]

    def _budget_epsilon(self, entries: List[Entry], delta: float) -> float:
        try:
            return _epsilon(entries, delta, self._budget_method(entries))
        except ValueError:  # the approx entries' deltas alone exceed the budget's delta
            return math.inf

    def _budget_method(self, entries: List[Entry]) -> str:
        if self.accounting == "exact" and not _all_gaussian(entries):
            return "best"  # 'exact' is undefined for this ledger: the smallest valid total
        return self.accounting

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
        """Record ``count`` discrete Gaussian releases: integer noise scale ``scale_units > 0`` and the L2
        sensitivity of the rounded query, ``sensitivity_units >= 0``, both in grid units (e.g.
        :class:`topicdp.mechanisms.SecureRelease` ``.scale_units`` and ``.sensitivity_units``)."""
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
        """The recorded releases as JSON-serialisable dicts (``kind``, ``name``, parameters, and the labels
        that were stated: ``gamma``, ``distribution``, ``unit``, ``neighbours``)."""
        return [_as_dict(e) for e in self._entries]

    def rdp(self, alpha: ArrayLike, scope: str = "dp"):
        """Total RDP curve of the RDP-describable entries in ``scope`` (approx entries are not included)."""
        return _rdp(self._select(scope), alpha)

    def epsilon(self, delta: float, method: str = "rdp", scope: str = "dp") -> float:
        """Total epsilon at total ``delta``; see the module docstring for ``method`` and ``scope``.

        Parameters
        ----------
        delta : float
            Total delta in (0, 1), including the deltas of approx entries.
        method : {"rdp", "simple", "exact", "best"}, default "rdp"
        scope : {"dp", "all"}, default "dp"
            ``"dp"``: the DP entries only (a DP statement). ``"all"``: every entry, a random-DP statement
            failing with probability at most :attr:`gamma` when random-DP entries are present.

        Returns
        -------
        float
            epsilon >= 0 (``0.0`` for an empty ledger).
        """
        delta = check_delta(delta)
        method = check_option(method, "method", LEDGER_METHODS)
        return _epsilon(self._select(scope), delta, method)

    def totals(self, delta: float, scope: str = "dp") -> Dict[str, float]:
        """Total epsilon by every applicable method, for the privacy report."""
        entries = self._select(scope)
        methods = [m for m in LEDGER_METHODS if m != "exact" or _all_gaussian(entries)]
        return {m: _epsilon(entries, check_delta(delta), m) for m in methods}

    def statement(self, delta: float) -> dict:
        """What the ledger guarantees at total ``delta`` (JSON-serialisable).

        ``"dp"``: the totals over the DP entries, an (epsilon, delta)-DP statement about those releases.
        ``"random_dp"`` (only when random-DP entries are present): the totals over *all* entries, which hold
        with probability at least ``1 - gamma`` over the neighbouring pair drawn from P, ``gamma`` the sum of
        the entries' gammas (union bound; module docstring). Also the budget and what remains of it.
        """
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
        """The entries in ``scope`` as one ``dp_accounting.ComposedDpEvent`` (module docstring).

        A Gaussian or Laplace entry becomes an event whose noise multiplier is its noise over *its own*
        sensitivity (the sensitivity for the relation it was calibrated under). dp-accounting reads a plain
        Gaussian or Laplace event that way under ``ADD_OR_REMOVE_ONE`` (its PLD accountant doubles the
        sensitivity of a Gaussian event under ``REPLACE_ONE``, its RDP accountant does not), so account the
        event with ``NeighboringRelation.ADD_OR_REMOVE_ONE``, unless an :class:`EventEntry` needs another
        relation (sampling without replacement: ``REPLACE_ONE``, with the RDP accountant). Pure and approx
        entries become ``UnsupportedDpEvent``, which the accountants refuse rather than mis-account.
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


def _curve(entries: List[Entry]):
    """The RDP curve to convert: continuous orders, or a grid when dp-accounting computes part of it."""
    if any(isinstance(e, EventEntry) for e in entries):
        orders = _event_orders()
        return orders, _rdp(entries, orders)
    return lambda a: _rdp(entries, a)


def _approx_totals(entries: List[Entry]) -> Tuple[float, float]:
    approx = [e for e in entries if isinstance(e, ApproxEntry)]
    return sum(e.epsilon for e in approx), sum(e.delta for e in approx)


def _remaining_delta(entries: List[Entry], delta: float, needed: bool) -> float:
    delta_a = _approx_totals(entries)[1]
    remaining = delta - delta_a
    if remaining < 0.0 or (needed and remaining <= 0.0):
        raise ValueError(f"delta must exceed the approx entries' total delta {delta_a:g} "
                         f"(the rest pays for the Gaussian/RDP entries), got {delta:g}")
    return remaining


def _epsilon(entries: List[Entry], delta: float, method: str) -> float:
    """The total of ``entries`` by ``method``: the worst combination of one part per partitioning
    (:func:`worst_combination`; module docstring)."""
    return worst_combination(entries, partition_of, lambda es: _epsilon_sequential(es, delta, method),
                             signature=_signature,
                             bound=lambda common, groups: _epsilon_bound(common, groups, delta, method))


def _epsilon_sequential(entries: List[Entry], delta: float, method: str) -> float:
    if method == "rdp":
        return _epsilon_rdp(entries, delta)
    if method == "simple":
        return _epsilon_simple(entries, delta)
    if method == "exact":
        return _epsilon_exact(entries, delta)
    totals = [_epsilon_rdp(entries, delta), _epsilon_simple(entries, delta)]
    if _all_gaussian(entries):
        totals.append(_epsilon_exact(entries, delta))
    return min(totals)


def _epsilon_rdp(entries: List[Entry], delta: float) -> float:
    has_rdp = any(not isinstance(e, ApproxEntry) for e in entries)
    remaining = _remaining_delta(entries, delta, needed=has_rdp)
    eps = _approx_totals(entries)[0]
    if has_rdp:
        eps += rdp_to_dp(_curve(entries), remaining, conversion="improved")[0]
    return eps


def _epsilon_simple(entries: List[Entry], delta: float) -> float:
    gaussians = [e for e in entries if isinstance(e, _GAUSSIAN_LIKE)]
    remaining = _remaining_delta(entries, delta, needed=bool(gaussians))
    share = remaining / len(gaussians) if gaussians else remaining
    return _approx_totals(entries)[0] + sum(_simple_epsilon(e, share) for e in entries)


def _simple_epsilon(e: Entry, share: float) -> float:
    """One entry's epsilon in basic composition, a Gaussian-like entry at its ``share`` of the delta (an approx
    entry's epsilon is counted by :func:`_approx_totals`)."""
    if isinstance(e, GaussianEntry):
        return gdp_epsilon(e.mu, share)
    if isinstance(e, (DiscreteGaussianEntry, EventEntry)):
        return rdp_to_dp(_curve([e]), share, conversion="improved")[0]
    if isinstance(e, LaplaceEntry):
        return e.pure_epsilon
    if isinstance(e, PureEntry):
        return e.epsilon
    return 0.0


def _all_gaussian(entries: List[Entry]) -> bool:
    return all(isinstance(e, GaussianEntry) for e in entries)


def _epsilon_exact(entries: List[Entry], delta: float) -> float:
    if not _all_gaussian(entries):
        kinds = sorted({e.kind for e in entries if not isinstance(e, GaussianEntry)})
        raise ValueError("method='exact' requires every entry to be a continuous Gaussian; this ledger also has "
                         f"{', '.join(kinds)} entries (use 'rdp', 'simple' or 'best')")
    mu = math.sqrt(sum(e.mu ** 2 for e in entries if isinstance(e, GaussianEntry)))  # all are (checked above)
    return gdp_epsilon(mu, delta) if mu > 0.0 else 0.0


# -- partitions: parallel composition within one partitioning, sequential across them ------------------------

def partition_of(e: Entry) -> Optional[Tuple[Hashable, str]]:
    """``(partitioning, part)`` of an entry, or None for an entry that read all the data. An entry with a partition
    label and no partitioning (a legacy entry) is its own partitioning: sequential with every other label."""
    if e.partition is None:
        return None
    return (("partitioning", e.partitioning) if e.partitioning is not None else ("legacy", e.partition)), e.partition


def _signature(e: Entry) -> Hashable:
    """What an entry's cost depends on (everything but its name and labels of place)."""
    return repr(replace(e, name="", partition=None, partitioning=None))


def _epsilon_bound(common: List[Entry], groups: List[List[List[Entry]]], delta: float, method: str) -> float:
    """An upper bound of :func:`_epsilon` over every combination of one part per partitioning: each partitioning's
    worst part taken term by term (module docstring)."""
    everything = common + [e for parts in groups for part in parts for e in part]
    if method == "exact":
        _epsilon_exact(everything, delta)  # refuses non-Gaussian ledgers with its message
        return _exact_bound(common, groups, delta)
    if method == "rdp":
        return _rdp_bound(common, groups, delta)
    if method == "simple":
        return _simple_bound(common, groups, delta)
    totals = [_rdp_bound(common, groups, delta), _simple_bound(common, groups, delta)]
    if _all_gaussian(everything):
        totals.append(_exact_bound(common, groups, delta))
    return min(totals)


def _worst_sum(common: List[Entry], groups: List[List[List[Entry]]], cost: Callable[[List[Entry]], float]) -> float:
    return cost(common) + sum(max(cost(part) for part in parts) for parts in groups)


def _exact_bound(common: List[Entry], groups: List[List[List[Entry]]], delta: float) -> float:
    mu2 = _worst_sum(common, groups, lambda es: sum(e.mu ** 2 for e in es if isinstance(e, GaussianEntry)))
    return gdp_epsilon(math.sqrt(mu2), delta) if mu2 > 0.0 else 0.0


def _rdp_bound(common: List[Entry], groups: List[List[List[Entry]]], delta: float) -> float:
    everything = common + [e for parts in groups for part in parts for e in part]
    eps_a = _worst_sum(common, groups, lambda es: _approx_totals(es)[0])
    delta_a = _worst_sum(common, groups, lambda es: _approx_totals(es)[1])
    has_rdp = any(not isinstance(e, ApproxEntry) for e in everything)
    remaining = delta - delta_a
    if remaining < 0.0 or (has_rdp and remaining <= 0.0):
        raise ValueError(f"delta must exceed the approx entries' total delta {delta_a:g} (the worst part of each "
                         f"partitioning), got {delta:g}")
    if not has_rdp:
        return eps_a

    def curve(a):
        return np.asarray(_rdp(common, a)) + sum(np.max([np.asarray(_rdp(part, a)) for part in parts], axis=0)
                                                 for parts in groups)

    if any(isinstance(e, EventEntry) for e in everything):
        orders = _event_orders()
        return eps_a + rdp_to_dp((orders, curve(orders)), remaining, conversion="improved")[0]
    return eps_a + rdp_to_dp(curve, remaining, conversion="improved")[0]


def _simple_bound(common: List[Entry], groups: List[List[List[Entry]]], delta: float) -> float:
    n_gaussians = _worst_sum(common, groups, lambda es: float(sum(isinstance(e, _GAUSSIAN_LIKE) for e in es)))
    delta_a = _worst_sum(common, groups, lambda es: _approx_totals(es)[1])
    remaining = delta - delta_a
    if remaining < 0.0 or (n_gaussians and remaining <= 0.0):
        raise ValueError(f"delta must exceed the approx entries' total delta {delta_a:g} (the worst part of each "
                         f"partitioning), got {delta:g}")
    share = remaining / n_gaussians if n_gaussians else remaining  # the smallest share any combination gives
    return _worst_sum(common, groups, lambda es: _approx_totals(es)[0] + sum(_simple_epsilon(e, share) for e in es))


def _as_dict(e: Entry) -> dict:
    out = {}
    for f in fields(e):
        value = getattr(e, f.name)
        if f.name == "event":
            value = repr(value)
        if value is not None or not f.kw_only:
            out[f.name] = value
    if e.gamma is not None:
        out["guarantee"] = "random-DP"
    return out


def labelled(entries: Iterable[Entry], **labels) -> List[Entry]:
    """``entries`` with the given labels (``unit``, ``neighbours``, ``gamma``, ``distribution``, ``partition``,
    ``partitioning``) set."""
    return [replace(e, **labels) for e in entries]


@contextlib.contextmanager
def _quiet_absl():
    """dp-accounting logs a warning for every RDP order whose series fails to converge; such orders are
    dropped from the minimum over orders, which can only make epsilon larger (safe), so the warnings are
    silenced for the duration of one accounting call."""
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
