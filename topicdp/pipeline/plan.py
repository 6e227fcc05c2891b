"""The plan of a release, from public facts only, and the decision it leads to.

:func:`plan_request` reads the request and the public inputs it names (a word list, a reference corpus) and settles
what needs no private data: the budget split, the mechanisms that can give the guarantee, K against a known
vocabulary. :func:`decide` takes the plan and the number of units (stated public, or a DP count the report
composes), asks each candidate road for its forecast (:mod:`topicdp.pipeline.roads`; with a public reference
dp-vem's simulation on it, the best forecast the public facts allow), picks the largest forecast top-10 overlap,
and says whether the release would miss the unit's targets (then it is refused unless the owner insists, with a
configuration that costs no privacy to try proposed: :mod:`topicdp.pipeline.proposal`). Every input is public or a
DP output, so every refusal, choice and printed line is too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .._names import FORECAST_MECHANISMS, MECHANISM_NEIGHBOURS, MECHANISM_UNITS, Neighbours
from ..rdp import GaussianEntry, PrivacyLedger, calibrate_gaussian
from ..rdp.ledger import Budget, labelled
from ..rdp.ledger_file import spent
from ..vocabulary import (SHARE_COMMON_WORDS_ONLY, forecast_vocabulary, selection_entries, selection_method,
                          selection_sigma, words_per_unit)
from .roads import MECHANISMS, RANDOM_DP, public_start
from .request import ReleaseRequest, model_label

#: share of the total epsilon (delta) spent on selecting the vocabulary under DP, unless the request says
VOCABULARY_EPSILON_SHARE = 0.2
VOCABULARY_DELTA_SHARE = 0.5
#: share of the total epsilon (delta) spent on a DP count of the units when the owner states none
COUNT_EPSILON_SHARE = 0.05
COUNT_DELTA_SHARE = 0.05


@dataclass(frozen=True)
class BudgetSplit:
    """How the request's total budget is divided (basic composition: the parts add up to the total).

    ``count`` is None when the owner states the number of units; ``vocabulary`` is None for a public (or
    non-DP) vocabulary.
    """

    topics: Budget
    count: Budget | None = None
    vocabulary: Budget | None = None

    def parts(self) -> dict[str, Budget]:
        out = {"unit count": self.count, "vocabulary": self.vocabulary, "topics": self.topics}
        return {name: b for name, b in out.items() if b is not None}


def split_budget(request: ReleaseRequest) -> BudgetSplit:
    """The budget of each step; refuses a vocabulary budget that leaves nothing for the topics."""
    eps, delta = request.epsilon, request.delta
    if request.guarantee == "random-dp":
        return BudgetSplit(topics=Budget(eps, delta))
    count = None
    if request.n_units is None:
        count = Budget(COUNT_EPSILON_SHARE * eps, COUNT_DELTA_SHARE * delta)
    vocabulary = None
    policy = request.vocabulary
    if policy.kind == "dp":
        vocabulary = Budget(VOCABULARY_EPSILON_SHARE * eps if policy.epsilon is None else policy.epsilon,
                            VOCABULARY_DELTA_SHARE * delta if policy.delta is None else policy.delta)
    spent = [b for b in (count, vocabulary) if b is not None]
    eps_left = eps - sum(b.epsilon for b in spent)
    delta_left = delta - sum(b.delta for b in spent)
    if eps_left <= 0 or delta_left <= 0:
        raise ValueError(f"the vocabulary budget ({vocabulary}) and the unit count's ({count}) leave nothing of the "
                         f"total (epsilon={eps:g}, delta={delta:g}) for the topics: lower the vocabulary budget")
    return BudgetSplit(topics=Budget(eps_left, delta_left), count=count, vocabulary=vocabulary)


@dataclass(frozen=True)
class ReleasePlan:
    """What :func:`plan_request` settled before any private data is read."""

    request: ReleaseRequest
    budget: BudgetSplit
    candidates: tuple[str, ...]
    reference: tuple[tuple[str, ...], tuple] | None = field(default=None, repr=False)
    #: the ledger entries of the DP unit count (:func:`count_entries`; none where the count is stated), set by
    #: :func:`plan_request`: planned before reading and recorded when drawn
    count_entries: tuple = field(default=(), repr=False)

    def topics_entries(self, road: str) -> list:
        """The ledger entries the topics' ``road`` records at this plan's topics budget (the row's own)."""
        return (RANDOM_DP if self.request.guarantee == "random-dp" else MECHANISMS[road]).planned_entries(self)

    def lines(self) -> list[str]:
        r = self.request
        if r.guarantee == "random-dp":
            units = "replace-one neighbours drawn from P (the sampler's pairs); nothing is counted"
        elif r.n_units is not None:
            units = f"{r.n_units} {r.unit}s stated public: replace-one neighbours"
        else:
            units = f"the number of {r.unit}s is private: add/remove neighbours, counted under DP"
        out = [f"request: K={r.n_topics}, total epsilon={r.epsilon:g}, delta={r.delta:g}, unit {r.unit}; {units}"]
        if r.guarantee == "random-dp":
            out.append(f"road: random DP (NOT DP): TopicDP over {model_label(r.topicdp.model)} with a sampled sensitivity")
            return out
        for name, b in self.budget.parts().items():
            out.append(f"  budget for the {name}: {b}")
        if r.vocabulary.kind == "public":
            out.append(f"  vocabulary: a public list of {len(r.vocabulary.words or ())} words")
        return out


def plan_request(request: ReleaseRequest, reference: tuple[list, list] | None = None) -> ReleasePlan:
    """Settle everything that needs no private data, or refuse; ``reference``: the public reference's
    (texts, users) when the request names one (read by the caller, once)."""
    def supported(name: str) -> str | None:
        """Why mechanism ``name`` cannot give the guarantee at the unit and neighbour relation (None: it can)."""
        if request.unit not in MECHANISM_UNITS[name]:
            return f"{name} protects {' or '.join(MECHANISM_UNITS[name])}s only (unit {request.unit} asked for)"
        if request.neighbours not in MECHANISM_NEIGHBOURS[name]:
            if request.neighbours == Neighbours.ADD_REMOVE:
                return (f"{name} is calibrated for replace-one neighbours with the number of units public: state "
                        f"it (n_units=N)")
            return f"{name} is calibrated for add/remove neighbours: do not state the number of units"
        if request.source.sharded and name != "dp-vem":
            return f"{name} reads the corpus in memory; a sharded corpus is released by dp-vem"
        return None

    budget = split_budget(request)
    candidates: tuple[str, ...] = ()
    if request.guarantee == "dp" and request.mechanism is not None:
        why = supported(request.mechanism)
        if why is not None:
            raise ValueError(why + " (nothing was read or spent)")
        candidates = (request.mechanism,)
    elif request.guarantee == "dp":
        candidates = tuple(name for name in FORECAST_MECHANISMS if supported(name) is None)
    return ReleasePlan(request, budget, candidates,
                       None if reference is None else (tuple(reference[0]), tuple(reference[1])),
                       count_entries(request, budget))


def count_entries(request: ReleaseRequest, budget: BudgetSplit) -> tuple:
    """The ledger entries of the DP unit count (one Gaussian, L2 sensitivity 1 under add/remove; its budget the
    plan's split), none where the count is stated."""
    b = budget.count
    if b is None:
        return ()
    sigma = calibrate_gaussian(b.epsilon, b.delta, 1.0, method="analytic")
    return (GaussianEntry("unit count", sigma, 1.0, unit=str(request.unit), neighbours=str(request.neighbours)),)


@dataclass(frozen=True)
class PlannedRun:
    """A run's planned entries, from public facts only: the steps before the topics (the unit count, a DP
    vocabulary), in order, and each candidate mechanism's topics entries."""

    steps: list
    topics: dict

    @property
    def fixed(self) -> list:
        return [e for _, entries in self.steps for e in entries]

    def costs(self, others: list, delta: float) -> dict[str, float]:
        """Each candidate's total with ``others`` and the fixed steps at ``delta`` (the ledger's accounting)."""
        fixed = self.fixed
        return {m: dp_total(others + fixed + t, delta) for m, t in self.topics.items()}

    def cheapest(self, others: list, delta: float) -> str:
        """The candidate whose topics compose best with ``others`` and the fixed steps at ``delta``: if it does not
        fit, none does (the first of a tie)."""
        costs = self.costs(others, delta)
        return min(costs, key=costs.__getitem__)

    def worst(self, others: list, delta: float) -> list:
        """The candidate's topics entries that compose worst with ``others`` and the fixed steps at ``delta``: what
        a budget split must allow for when it has to hold whichever candidate is chosen."""
        costs = self.costs(others, delta)
        return self.topics[max(costs, key=costs.__getitem__)]

    def labelled(self, **labels: Any) -> "PlannedRun":
        return PlannedRun([(name, labelled(es, **labels)) for name, es in self.steps],
                          {m: labelled(es, **labels) for m, es in self.topics.items()})


def dp_total(entries: list, delta: float) -> float:
    """The DP total of ``entries`` at ``delta`` by the ledger's accounting (random-DP entries left out)."""
    ledger = PrivacyLedger()
    ledger._entries = [e for e in entries if e.gamma is None]
    return spent(ledger, delta, "dp")


def planned_steps(plan: ReleasePlan) -> PlannedRun:
    """The entries each step of ``plan`` will record, from public facts only (:class:`PlannedRun`): each step's own
    ``*_entries`` (:func:`count_entries`, :func:`topicdp.vocabulary.selection_entries`, the roads' planned_entries)."""
    request = plan.request
    if request.guarantee == "random-dp":
        return PlannedRun([], {RANDOM_DP.label(request): plan.topics_entries("random-dp")})
    steps: list = []
    if plan.count_entries:
        steps.append(("unit count", list(plan.count_entries)))
    if plan.budget.vocabulary is not None:
        b, neighbours = plan.budget.vocabulary, str(request.neighbours)
        sigma = selection_sigma(b.epsilon, b.delta, neighbours)
        steps.append(("vocabulary", selection_entries(sigma, b.delta, str(request.unit), neighbours)))
    return PlannedRun(steps, {m: plan.topics_entries(m) for m in plan.candidates})


@dataclass(frozen=True)
class UnitCount:
    """The number of units the decision uses: stated by the owner, or a DP count (post-processed to >= 1)."""

    value: int
    source: str  # "stated" or "DP count"
    sigma: float | None = None

    def line(self, unit: str) -> str:
        if self.source == "stated":
            return f"{self.value:,} {unit}s (stated public)"
        return (f"about {self.value:,} {unit}s (a DP estimate: a Gaussian count, noise sigma {self.sigma:.3g}; the exact "
                "count is private)")


@dataclass(frozen=True)
class Decision:
    """The mechanism and its forecast, from the plan and the unit count (public or DP).

    ``forecasts`` are the closed forms of every candidate; ``simulation`` is dp-vem's forecast simulated on the public
    reference (None without one), which replaces dp-vem's closed form in the choice and in the refusal. ``words``
    says which words the simulation ran on (the release's, or those the plan forecasts before a DP selection).
    """

    mechanism: str
    reason: str
    count: UnitCount
    n_words: int
    forecasts: dict
    simulation: Any = None  # a ReadabilityForecast (public-simulation), or None
    words: str = ""
    unit: str = "unit"  # the request's unit, as the lines name it
    proposal: str | None = None  # where it refuses: what :mod:`topicdp.pipeline.proposal` proposes instead

    @property
    def forecast(self):
        if self.mechanism == "dp-vem" and self.simulation is not None:
            return self.simulation
        return self.forecasts.get(self.mechanism)

    @property
    def simulated(self) -> bool:
        """Whether the decision rests on the simulation on the public reference."""
        return self.mechanism == "dp-vem" and self.simulation is not None

    @property
    def noise(self) -> bool:
        """Whether the chosen forecast misses the targets (refused unless the owner insists)."""
        refuses = getattr(self.forecast, "refuses", None)
        return self.forecast is not None and (self.forecast.verdict == "noise" if refuses is None else bool(refuses))

    def lines(self) -> list[str]:
        out = [f"plan: {self.mechanism} ({self.reason}); {self.count.line(self.unit)}, {self.n_words} words"]
        for name, fc in self.forecasts.items():
            closed = " (closed form; the simulation below decides)" if name == "dp-vem" and self.simulated else ""
            if fc is not None and fc.overlap_with_lda is not None:
                contrast = "" if fc.contrast is None else f", contrast {fc.contrast:.2f}x"
                out.append(f"  forecast {name:<16} top-10 overlap with LDA {fc.overlap_with_lda:.2f}{contrast}: "
                           f"{fc.verdict} (noise {fc.noise_to_signal:.2g} x the 10th-largest topic-word "
                           f"probability){closed}")
            elif fc is not None:  # a spectral configuration: whether its utility check can pass
                out.append(f"  forecast {name:<16} {fc.verdict}: its utility check is forecast to "
                           + ("fail" if fc.verdict == "noise" else "pass"))
        if self.simulated:
            out.append(f"simulated on the public reference ({self.words}):")
            out += ["  " + line for line in self.simulation.lines()]
        elif self.forecast is not None:
            out += ["  " + line for line in self.forecast.lines()[1:]]
        return out


def vocabulary_share(plan: ReleasePlan, n_words: int, count: UnitCount) -> float:
    """The release's vocabulary size over the owner's ordinary one; below 1 the contrast forecast reads the ceiling of
    topics on the words kept (:func:`topicdp.forecast.contrast_ceiling`).

    Below 1 only for a DP selection forecast to keep fewer than ``max_features`` words *and* to pass only words held
    by more than :data:`topicdp.vocabulary.SHARE_COMMON_WORDS_ONLY` of the units (only common words): one passing
    words a few percent of the units use keeps topical words however few, and the share would understate it."""
    policy = plan.request.vocabulary
    if policy.kind != "dp" or not policy.max_features or plan.budget.vocabulary is None:
        return 1.0
    budget, request = plan.budget.vocabulary, plan.request
    selection = forecast_vocabulary(budget.epsilon, budget.delta, count.value, unit=str(request.unit),
                                    neighbours=str(request.neighbours), max_features=policy.max_features,
                                    max_words_per_unit=word_cap(plan, count.value))
    if selection.share <= SHARE_COMMON_WORDS_ONLY:
        return 1.0
    return min(1.0, max(n_words, 1) / policy.max_features)


def decide(plan: ReleasePlan, count: UnitCount, *, n_words: int, simulation=None, words: str = "") -> Decision:
    """Forecast the candidates at ``count`` units and pick the mechanism named, or the largest forecast top-10
    overlap (ties to the first). ``n_words``: the release's vocabulary size (a public list's, a DP selection's, or
    :func:`planned_words` before it; ValueError below K). ``simulation``: dp-vem's forecast simulated on the public
    reference (on the ``words`` it names), which then stands for dp-vem in the choice and the refusal."""
    request = plan.request
    if n_words < request.n_topics:
        raise ValueError(f"the DP vocabulary is forecast to keep about {n_words} words, fewer than the "
                         f"{request.n_topics} topics asked for: " + _few_words_advice(plan, count))
    share = vocabulary_share(plan, n_words, count)
    forecasts = {name: _forecast(plan, name, count, max(n_words, 2), share) for name in plan.candidates}
    if "dp-vem" not in plan.candidates:
        simulation = None
    extra = dict(simulation=simulation, words=words, unit=str(request.unit))
    if request.mechanism is not None:
        reason = "named by the caller"
        if MECHANISMS[request.mechanism].predict is None:
            reason += "; it has no readability forecast, so nothing checks this release before it is drawn"
        return Decision(request.mechanism, reason, count, n_words, forecasts, **extra)
    if not plan.candidates:
        raise ValueError("no mechanism gives this guarantee at this unit and neighbour relation")
    # the rule: the largest forecast top-10 overlap (dp-vem's simulated where there is a reference);
    # max keeps the first of a tie
    overlaps = {name: fc.expected_overlap for name, fc in forecasts.items()
                if fc is not None and fc.expected_overlap is not None}
    if simulation is not None and getattr(simulation, "expected_overlap", None) is not None:
        overlaps["dp-vem"] = simulation.expected_overlap
    best = max(plan.candidates, key=lambda name: overlaps.get(name, -1.0))
    reason = ("the mechanism of a sharded corpus: its passes are sums over shards" if request.source.sharded else
              "largest forecast top-10 overlap")
    return Decision(best, reason, count, n_words, forecasts, **extra)


def _forecast(plan: ReleasePlan, name: str, count: UnitCount, n_words: int, share: float = 1.0):
    """Mechanism ``name``'s closed-form forecast at the plan's topics budget, ``count`` units and ``n_words`` words."""
    request, topics = plan.request, plan.budget.topics
    return MECHANISMS[name].forecast(epsilon=topics.epsilon, delta=topics.delta, unit=str(request.unit),
                                     neighbours=str(request.neighbours), n_units=count.value,
                                     n_topics=request.n_topics, n_words=n_words, public_start=public_start(plan),
                                     vocabulary_share=share)


def _few_words_advice(plan: ReleasePlan, count: UnitCount) -> str:
    """What would help where a DP vocabulary cannot hold K words: a public word list, unless dp-vem's forecast on a
    list of ``max_features`` words says noise even then, when it says how many units a release needs (the count
    scaled by how far the noise must shrink: sigma falls as 1/n)."""
    request = plan.request
    n_words = request.vocabulary.max_features or 2000
    fc = _forecast(plan, "dp-vem", count, max(n_words, request.n_topics + 1))
    if fc is not None and fc.verdict == "noise" and fc.sigma_readable > 0:
        factor = fc.sigma / fc.sigma_readable
        who = str(request.unit)
        return (f"too few {who}s. Even a public word list would leave the topics noise at about {count.value:,} "
                f"{who}s ({'stated' if count.source == 'stated' else 'a DP estimate'}): the noise would have to shrink {factor:.3g}x, so a release at this "
                f"budget needs about {factor * count.value:,.0f} {who}s"
                + ("" if who == "document" else ", or the document level") + ", or a larger epsilon")
    return ("give a public word list (vocabulary=VocabularyPolicy.public(words)), a larger vocabulary budget, or "
            "fewer topics")


def word_cap(plan: ReleasePlan, n_units: int) -> int:
    """The DP selection's words per unit ``k``: the request's, else the cap public facts give at ``n_units`` (the
    decision's count: stated, or a DP output) and the vocabulary budget (:func:`topicdp.vocabulary.words_per_unit`);
    the one ``k`` the forecast, the choice of method and the selection all use."""
    stated, budget = plan.request.vocabulary.max_words_per_unit, plan.budget.vocabulary
    if stated is not None:
        return stated
    assert budget is not None  # a DP policy has a vocabulary budget (split_budget)
    return words_per_unit(budget.epsilon, budget.delta, n_units, str(plan.request.neighbours))


def select_words(source, plan, ledger, random_state, n_units: int):
    """The DP vocabulary of the reader (checked unchanged since the census first) at the plan's vocabulary budget
    and neighbour relation, by the method the public facts pick (:func:`topicdp.vocabulary.selection_method` at
    ``n_units``, the decision's count), its entries recorded in ``ledger``."""
    request, budget = plan.request, plan.budget.vocabulary
    assert budget is not None
    source.check_unchanged()
    neighbours, k = str(request.neighbours), word_cap(plan, n_units)
    return source.select_vocabulary(epsilon=budget.epsilon, delta=budget.delta, neighbours=neighbours,
                                    max_words_per_unit=k, max_features=request.vocabulary.max_features,
                                    random_state=random_state, ledger=ledger,
                                    method=selection_method(budget.epsilon, budget.delta, n_units, k, neighbours))


def planned_words(plan: ReleasePlan, count: UnitCount):
    """The vocabulary size the decision assumes, and the DP selection's forecast (None for other policies):
    from the public reference when there is one, else an upper bound (module docstring of ``decide``)."""
    request, policy = plan.request, plan.request.vocabulary
    if policy.kind != "dp":
        return policy.n_words or policy.max_features, None
    assert plan.budget.vocabulary is not None  # a DP policy has a vocabulary budget (split_budget)
    reference: dict = {}
    if plan.reference is not None:
        reference = {"reference_texts": plan.reference[0], "reference_users": plan.reference[1]}
    fc = forecast_vocabulary(plan.budget.vocabulary.epsilon, plan.budget.vocabulary.delta, count.value,
                             unit=str(request.unit), neighbours=str(request.neighbours),
                             max_words_per_unit=word_cap(plan, count.value), max_features=policy.max_features,
                             stop_words=request.source.tokenizer_stop_words, **reference)
    if fc.expected_words is None:
        # without a public reference only a bound: a word needs at least tau units (each holding it alone,
        # weight 1); below that nothing can pass. Otherwise the decision is re-made on the size the selection
        # keeps (a DP output) before the topics' budget is spent.
        return (0 if count.value < fc.tau else policy.max_features), fc
    return min(max(int(math.floor(fc.expected_words)), 0), policy.max_features), fc
