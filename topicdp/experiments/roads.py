"""The roads ``topicdp compare`` runs: the registry's mechanisms through the release pipeline's own release path, and
the random-DP road (TopicDP over the request's default model, P the public reference).

Each (road, epsilon) is one release as ``topicdp privatize`` would make it, on a corpus read and tokenised once:

* a registry row (:data:`topicdp.pipeline.MECHANISMS`): the request names the mechanism and is planned
  (:func:`plan_request`, whose refusal -- a spectral configuration without a stated count, DP-SVI at the user
  level -- makes the row "not applicable"), then released by :func:`topicdp.pipeline.run.release_prepared`: the
  pipeline's charge, census, unit count (a DP count unless the owner states one), decision, mechanism and report,
  forced (``release_anyway``) so that a refused release's private scores can be shown beside the refusal's words
  (:func:`topicdp.pipeline.run.noise_refusal`). Every entry the release drew goes to the row.
* the random-DP road: the request's default agnostic template (``ReleaseRequest(...).topicdp``), its model started
  from the topics fitted on P, its sensitivity sampled on P once and reused for every epsilon (the sample is a
  function of P and the model only). Random DP is not DP: its rows say so.

What the pipeline does once per release and that does not depend on the private data (reading P, fitting the
public start for the random-DP road) is done once per comparison here; the steps that read the private corpus are
the pipeline's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..pipeline import ReleaseRequest, plan_request
from ..pipeline.compose import vocabulary_statement
from ..pipeline.run import noise_refusal, random_dp_forecast, random_dp_privatizer, release_prepared
from ..rdp import PrivacyLedger
from ..rdp.ledger_file import entry_to_json

#: the random-DP road's name in the table (not a registry row: its guarantee is not DP)
RANDOM_DP = "random-dp (TopicDP over gensim LDA)"


@dataclass
class Prepared:
    """What every road of one comparison shares: the request's public facts and the prepared corpora.

    ``source``: the pipeline's reader of the training users (:meth:`InMemorySource.of_records`, tokenised once on
    the public words); ``corpus``: that tokenised corpus, unbounded (the owner's diagnostics and ceiling, the
    random-DP road); ``heldout``: the held-out users on the same words. ``start``: topics fitted on the public
    reference (None without one); ``reference_corpus``: P on the release's words (the random-DP road's sampling
    distribution). ``request``: a template request (source, vocabulary, unit, K, reference, delta, stated count,
    seed, ledger) whose mechanism and epsilon each road replaces.
    """

    request: ReleaseRequest
    source: Any
    corpus: Any
    heldout: Any
    vocabulary: Any
    reference_pair: tuple | None = None
    reference_corpus: Any = None
    start: np.ndarray | None = None
    simulate: bool = False
    cache: dict = field(default_factory=dict)


@dataclass
class Outcome:
    """One road at one epsilon: the composed release, or the refusal's reason (with the forced release, if made).

    ``entries``: every ledger entry the release drew (JSON, :func:`topicdp.rdp.ledger_file.entry_to_json`), also
    where it was refused after a spend."""

    road: str
    epsilon: float
    release: Any = None
    refused: str | None = None
    forced: bool = False
    not_run: str | None = None
    forecast: str = ""
    applicable: bool = True  # False: the plan refused the request itself (the unit or neighbour relation)
    entries: list = field(default_factory=list)


def run_registry(name: str, epsilon: float, prep: Prepared) -> Outcome:
    """One registry mechanism at total budget ``epsilon``, by the pipeline's release path (module docstring)."""
    from ..pipeline.run import ReleaseRefused

    request = replace(prep.request, epsilon=epsilon, mechanism=name, release_anyway=True)
    try:
        plan = plan_request(request, prep.reference_pair)
    except ValueError as exc:  # the plan's own refusal (e.g. DP-SVI at the user level), before anything is read
        return Outcome(name, epsilon, not_run=str(exc), applicable=False)
    spent = PrivacyLedger()
    try:
        result = release_prepared(plan, prep.source, spent=spent, simulate=prep.simulate, echo=_quiet)
    except ValueError as exc:  # a refusal after the census or a spend (a precondition on released quantities), or
        # the persisted ledger's before any reading: the pipeline's words, which say what was spent
        reason = str(exc) if isinstance(exc, ReleaseRefused) else f"not charged: {exc}"
        return Outcome(name, epsilon, refused=reason, entries=_entries(spent))
    decision = result.decision
    refused = noise_refusal(decision)
    forecast = "" if decision is None or decision.forecast is None else str(getattr(decision.forecast, "verdict", ""))
    return Outcome(name, epsilon, release=result.release, refused=refused, forced=refused is not None,
                   forecast=forecast, entries=_entries(spent))


def _entries(ledger: PrivacyLedger) -> list:
    return [entry_to_json(e) for e in ledger.records]


def _quiet(line: str) -> None:
    """The pipeline's lines of each release: the comparison prints one line per row instead."""


def run_random_dp(epsilons, prep: Prepared, n_jobs: int) -> list[Outcome]:
    """The random-DP road at every epsilon from one sensitivity sample on P (module docstring), each release charged
    to the request's persisted ledger as ``topicdp privatize --guarantee random-dp`` charges it (its random-DP
    scope)."""
    from ..pipeline.charge import RunLedger, charged, open_charge

    if prep.reference_corpus is None:
        return [Outcome(RANDOM_DP, e, not_run="needs a public reference P (--reference): the private corpus as P is "
                        "noise by construction and its sigma leaks") for e in epsilons]
    request = replace(prep.request, guarantee="random-dp", mechanism=None, n_units=None, epsilon=float(epsilons[0]),
                      n_jobs=n_jobs)
    corpus = prep.source.prepare(list(prep.vocabulary))  # bounded as the pipeline bounds a random-DP release
    privatizer = random_dp_privatizer(request, prep.reference_corpus, start=prep.start)
    sample = privatizer.sample_sensitivity(corpus)
    out = []
    for epsilon in epsilons:
        at = replace(request, epsilon=float(epsilon))
        try:
            charge = open_charge(plan_request(at, prep.reference_pair), _quiet)
        except ValueError as exc:  # the persisted ledger's refusal (its relation, or no room), before any release
            out.append(Outcome(RANDOM_DP, float(epsilon), not_run=f"not charged: {exc}"))
            continue
        privatizer.set_params(epsilon=float(epsilon))
        sigma = privatizer.noise_scale(sample.sensitivity)
        fc = random_dp_forecast(at, sigma, corpus.n_words)
        refused = "the forecast from the sampled sensitivity says this release would be noise" \
            if fc.verdict == "noise" else None
        ledger = PrivacyLedger() if charge is None else charge.run_ledger()
        spent = PrivacyLedger()
        try:
            with charged(charge, ledger) as done:
                released = privatizer.fit(corpus, vocabulary_source=prep.cache["vocabulary_statement"],
                                          sensitivity_sample=sample, ledger=ledger).release_
                done(released)
        finally:
            spent.record(ledger.drawn() if isinstance(ledger, RunLedger) else ledger.records)
        out.append(Outcome(RANDOM_DP, float(epsilon), release=released, refused=refused, forced=refused is not None,
                           forecast=fc.verdict, entries=_entries(spent)))
    return out


def statement(prep: Prepared, origin: str):
    """What every release says of its words: a public list (P's, or a public corpus' own)."""
    built_in = prep.request.source.built_in and prep.reference_pair is None
    return vocabulary_statement("texts" if built_in else "public", None, built_in, origin)


