"""The roads ``topicdp compare`` runs: the registry's mechanisms through the release pipeline's own steps, and the
random-DP road (TopicDP over the request's default model, P the public reference).

Each (road, epsilon) is one release as ``topicdp privatize`` would make it, on a corpus read and prepared once:

* a registry row (:data:`topicdp.pipeline.MECHANISMS`): the request names the mechanism; :func:`plan_request` splits
  the budget; the unit count is a Gaussian count (add/remove neighbours) unless the mechanism needs replace-one
  neighbours (the spectral configurations), whose count the owner then states; :func:`topicdp.pipeline.decide` gives
  the plan's verdict (dp-vem's simulated on the public reference where ``simulate``); :meth:`Mechanism.release` fits
  the estimator (dp-vem from the public start); :func:`compose_release` states the whole report. A refusal keeps the
  plan's reason, and the release is forced (``release_anyway``) so that its private scores can be shown beside it.
* the random-DP road: the request's default agnostic template (``ReleaseRequest(...).topicdp``), its model started
  from the topics fitted on P, its sensitivity sampled on P once and reused for every epsilon (the sample is a
  function of P and the model only). Random DP is not DP: its rows say so.

What the pipeline does once per release (reading the corpus and P, fitting the public start) is done once per
comparison here, because it does not depend on the mechanism or epsilon; the steps that do are the pipeline's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..pipeline import MECHANISMS, ReleaseRequest, UnitCount, decide, plan_request
from ..pipeline.compose import compose_release, vocabulary_statement
from ..pipeline.run import random_dp_forecast, random_dp_privatizer, simulate_dp_vem, unit_count
from ..rdp import PrivacyLedger
from ..spectral import PreconditionError

#: the random-DP road's name in the table (not a registry row: its guarantee is not DP)
RANDOM_DP = "random-dp (TopicDP over gensim LDA)"


@dataclass
class Prepared:
    """What every road of one comparison shares: the request's public facts and the prepared corpora.

    ``start``: topics fitted on the public reference (None without one); ``reference_corpus``: P on the release's
    words (the random-DP road's sampling distribution). ``request``: a template request (source, vocabulary, unit,
    K, reference, delta) whose mechanism, epsilon and count each road replaces.
    """

    request: ReleaseRequest
    corpus: Any
    heldout: Any
    n_units: int
    vocabulary: Any
    reference_pair: tuple | None = None
    reference_corpus: Any = None
    start: np.ndarray | None = None
    simulate: bool = False
    cache: dict = field(default_factory=dict)


@dataclass
class Outcome:
    """One road at one epsilon: the composed release, or the refusal's reason (with the forced release, if made)."""

    road: str
    epsilon: float
    release: Any = None
    refused: str | None = None
    forced: bool = False
    not_run: str | None = None
    forecast: str = ""
    applicable: bool = True  # False: the plan refused the request itself (the unit or neighbour relation)


def run_registry(name: str, epsilon: float, prep: Prepared) -> Outcome:
    """One registry mechanism at total budget ``epsilon``, through the pipeline's steps (module docstring)."""
    mechanism = MECHANISMS[name]
    stated = "add-remove" not in mechanism.neighbours  # the spectral configurations need the count stated
    try:
        request = replace(prep.request, epsilon=epsilon, mechanism=name, n_units=prep.n_units if stated else None)
        plan = plan_request(request, prep.reference_pair)
    except ValueError as exc:  # the plan's own refusal (e.g. DP-SVI at the user level), before anything is read
        return Outcome(name, epsilon, not_run=str(exc), applicable=False)
    ledger = PrivacyLedger()
    count, count_sigma = unit_count(plan, prep.n_units, ledger)
    simulation, words = None, ""
    if name == "dp-vem" and prep.simulate and prep.reference_pair is not None:
        simulation, words = _simulate(plan, prep, count), "the release's words"
    decision = decide(plan, count, n_words=len(prep.vocabulary), simulation=simulation, words=words)
    forecast = _verdict(decision.forecast)
    refused = None
    if decision.noise:
        refused = (f"{'the simulation on the public reference' if decision.simulated else 'the forecast'} says this "
                   f"release would be {_VERDICT_WORDS.get(forecast, forecast)}")
    before = len(ledger)
    start = prep.start if name == "dp-vem" else None
    try:
        released = mechanism.release(plan, prep.corpus, n_units=count.value, ledger=ledger, start=start,
                                     vocabulary=prep.cache["vocabulary_statement"])
    except PreconditionError as exc:  # a spectral precondition checked on released quantities: the pipeline's refusal
        return Outcome(name, epsilon, refused=_join(refused, str(exc)), forced=refused is not None, forecast=forecast)
    final = compose_release(released, plan=plan, decision=decision, ledger=ledger, count_sigma=count_sigma,
                            topic_entries=ledger.records[before:])
    return Outcome(name, epsilon, release=final, refused=refused, forced=refused is not None, forecast=forecast)


def run_random_dp(epsilons, prep: Prepared, n_jobs: int) -> list[Outcome]:
    """The random-DP road at every epsilon from one sensitivity sample on P (module docstring)."""
    if prep.reference_corpus is None:
        return [Outcome(RANDOM_DP, e, not_run="needs a public reference P (--reference): the private corpus as P is "
                        "noise by construction and its sigma leaks") for e in epsilons]
    request = replace(prep.request, guarantee="random-dp", mechanism=None, n_units=None, epsilon=float(epsilons[0]),
                      n_jobs=n_jobs)
    privatizer = random_dp_privatizer(request, prep.reference_corpus, start=prep.start)
    sample = privatizer.sample_sensitivity(prep.corpus)
    out = []
    for epsilon in epsilons:
        privatizer.set_params(epsilon=float(epsilon))
        sigma = privatizer.noise_scale(sample.sensitivity)
        fc = random_dp_forecast(request, sigma, prep.corpus.n_words)
        refused = "the forecast from the sampled sensitivity says this release would be noise" \
            if fc.verdict == "noise" else None
        released = privatizer.fit(prep.corpus, vocabulary_source=prep.cache["vocabulary_statement"],
                                  sensitivity_sample=sample, ledger=PrivacyLedger()).release_
        out.append(Outcome(RANDOM_DP, float(epsilon), release=released, refused=refused, forced=refused is not None,
                           forecast=fc.verdict))
    return out


def statement(prep: Prepared, origin: str):
    """What every release says of its words: a public list (P's, or a public corpus' own)."""
    built_in = prep.request.source.built_in and prep.reference_pair is None
    return vocabulary_statement("texts" if built_in else "public", None, built_in, origin)


def _simulate(plan, prep: Prepared, count: UnitCount):
    """dp-vem simulated on the public reference at the private signal-to-noise ratio (the pipeline's own step, on
    the reference corpus this comparison read once): nothing is spent."""
    corpus = prep.cache.get("simulation_corpus")
    if corpus is None:
        from ..pipeline.run import reference_text

        assert prep.reference_pair is not None  # simulated only with a reference
        corpus = prep.cache["simulation_corpus"] = reference_text(prep.reference_pair, list(prep.vocabulary),
                                                                  plan.request.source)
    return simulate_dp_vem(plan, corpus, count)


#: what a refusal says each verdict means (the pipeline's words)
_VERDICT_WORDS = {"noise": "noise", "common words": "lists of common words, not themes",
                  "marginal": "below the overlap target of its unit (marginal)"}


def _verdict(forecast) -> str:
    return "" if forecast is None else str(getattr(forecast, "verdict", ""))


def _join(first: str | None, second: str) -> str:
    return second if first is None else f"{first}; forced: {second}"
