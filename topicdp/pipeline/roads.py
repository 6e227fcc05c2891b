"""The registry of roads: each row owns its facts -- its estimator, its planned ledger entries, its forecast.

Names, summaries, units and neighbour relations come from :mod:`topicdp._names` (pure Python: ``--help`` needs
no numpy). Per row: :meth:`Road.planned_entries`, the topics' entries from public facts by the estimator's own
``planned_entries``; :meth:`Road.forecast`, its readability from public quantities (the noise, not the corpus);
:meth:`Road.estimator`, the private estimator a Python user would build; :meth:`Road.release`, its fit on the
prepared corpus. :data:`RANDOM_DP` is TopicDP's sampled-sensitivity road (random DP, not DP), outside
:data:`MECHANISMS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Protocol

from joblib import effective_n_jobs

from .._names import (FORECAST_MECHANISMS, MECHANISM_NEIGHBOURS, MECHANISM_SUMMARIES, MECHANISM_UNITS,
                      RIGOROUS_MECHANISMS)

if TYPE_CHECKING:
    import numpy as np

    from ..corpus import Corpus
    from ..rdp import PrivacyLedger
    from ..private_release import PrivateRelease, VocabularyStatement
    from ..streaming import StreamingCorpus
    from .request import ReleaseRequest


class PlanView(Protocol):
    """What a row reads of a :class:`topicdp.pipeline.ReleasePlan` (the plan consults the registry, so the registry
    does not import the plan): the request and its budget split."""

    @property
    def request(self) -> "ReleaseRequest": ...

    @property
    def budget(self) -> Any: ...  # a BudgetSplit: its ``topics`` part is the estimator's (epsilon, delta)

#: (plan, number of units (stated or a DP count), public start topics or None) -> an unfitted private estimator
EstimatorFactory = Callable[["PlanView", int, "np.ndarray | None"], Any]


def public_start(plan: "PlanView") -> bool:
    """Whether dp-vem starts from topics fitted on the public reference: exactly when the request names one. The
    one place of the rule: the planned entries, the forecasts, the estimator's iterations and the release read it."""
    return plan.request.reference is not None


@dataclass(frozen=True)
class Road:
    """One road of ``guarantee="dp"``: what it supports, spends and is forecast to release, and its estimator
    (``estimator(plan, n_units, start)``: the plan's topic step as a Python user would build it). ``chosen_by_rule``:
    the plan's rule picks among it (it has a closed-form forecast); the others run only when named."""

    name: str
    summary: str
    chosen_by_rule: bool
    neighbours: tuple[str, ...]
    units: tuple[str, ...]
    estimator: EstimatorFactory
    predict: Callable[..., Any] | None = None
    fit_params: Callable[["PlanView"], dict] = lambda plan: {}
    planned: Callable[["PlanView"], list] | None = None
    simulate: Callable[..., Any] | None = None  # dp-vem's forecast simulated on a public reference

    def planned_entries(self, plan: "PlanView") -> list:
        """The ledger entries the topics' step records at the plan's topics budget, before the corpus is read: the
        row's estimator's own as the pipeline runs it (they read no count), unless the row plans them itself."""
        if self.planned is not None:
            return self.planned(plan)
        return self.estimator(plan, plan.request.n_units or 0, None).planned_entries()

    def forecast(self, *, epsilon: float, delta: float, unit: str, neighbours: str, n_units: int, n_topics: int,
                 n_words: int, public_start: bool = False, vocabulary_share: float = 1.0, signal=None):
        """The readability forecast from public quantities at the topics' budget: a
        :class:`~topicdp.forecast.ReadabilityForecast`, a :class:`SpectralForecast`, or None (DP-SVI has none).
        ``public_start``: dp-vem starts from public topics; ``vocabulary_share``: as
        :func:`topicdp.forecast.forecast_readability`'s."""
        if self.predict is None:
            return None
        return self.predict(epsilon=epsilon, delta=delta, unit=unit, neighbours=neighbours, n_units=n_units,
                            n_topics=n_topics, n_words=n_words, public_start=public_start,
                            vocabulary_share=vocabulary_share, signal=signal)

    def release(self, plan: "PlanView", corpus: "Corpus | StreamingCorpus", *, n_units: int,
                ledger: "PrivacyLedger", start: "np.ndarray | None" = None, client=None,
                vocabulary: "str | VocabularyStatement" = "public") -> "PrivateRelease":
        """Fit the plan's estimator on the prepared ``corpus``, its releases recorded in ``ledger``.

        ``vocabulary``: what the release says of its words (the estimator's ``vocabulary_source``: where they came
        from). ``client``: a dask.distributed Client running a streamed corpus' passes (dp-vem only).
        """
        extra = dict(self.fit_params(plan), **({} if client is None else {"client": client}))
        model = self.estimator(plan, n_units, start)
        return model.fit(corpus, vocabulary_source=vocabulary, ledger=ledger, **extra).release_


@dataclass(frozen=True)
class SpectralForecast:
    """Whether a spectral configuration's run-time utility check can pass, forecast from public quantities.

    The check (DeCarolis et al. 2020, App. I.1-I.2) needs the released M2's noise below ``lambda_k / 2``, and for
    configurations 3-4 a positive Procedure-1 eigengap bound: :func:`topicdp.spectral.recommend.predicted_noise`
    gives both from the sensitivities, the budget and a prior guess of ``lambda_k``. ``noise``: forecast to fail.
    """

    configuration: int
    m2_noise: float
    relative_noise: float
    feasible: bool
    verdict: str
    overlap_with_lda = None
    expected_overlap = None

    def lines(self) -> list[str]:
        out = [f"readability forecast: {self.verdict}",
               f"  the released M2's noise is about {self.m2_noise:.3g} x lambda_k (its utility check needs at most "
               f"0.5: half the spectral gap); tensor noise about {self.relative_noise:.3g} x its signal"]
        if not self.feasible:
            out.append("  the Procedure-1 eigengap bound is expected to fail (its Laplace margin exceeds the gap)")
        if self.verdict == "noise":
            out.append("  What would help: more units (the sensitivities fall as 1/n), a larger epsilon, fewer "
                       "topics, or a smaller vocabulary.")
        return out


# -- dp-vem ------------------------------------------------------------------------------------------------

#: dp-vem's iterations: 7 from a random start (4 of them an over-complete warm-up), 2 from public topics (the start
#: has done most of the work)
DP_VEM_ITERATIONS = {False: 7, True: 2}


def _dp_vem(plan: "PlanView", n_units: int, start: "np.ndarray | None"):
    from ..variational import DPVariationalEM

    r, topics = plan.request, plan.budget.topics
    return DPVariationalEM(r.n_topics, epsilon=topics.epsilon, delta=topics.delta, unit=str(r.unit),
                            neighbours=str(r.neighbours), n_iterations=DP_VEM_ITERATIONS[public_start(plan)],
                            init=start, n_jobs=effective_n_jobs(r.n_jobs), random_state=r.seed)


def _dp_vem_simulation(plan: "PlanView", reference: "Corpus", count, *, vocabulary_share: float,
                       n_draws: int | None = None, fitted_on: "Corpus | None" = None):
    """dp-vem from a public start simulated on the public reference (:func:`topicdp.forecast.forecast_on_reference`):
    nothing spent. Fitted on it under the private corpus' bounds (``fitted_on``, its units like the private ones) and
    scored on its whole text (``reference``), which has nothing to protect and reads co-occurrences better."""
    import numpy as np

    from ..forecast import SIMULATION_DRAWS, forecast_on_reference
    from .sources import bounded

    request, V = plan.request, reference.n_words
    fitted_on = bounded(request.source, reference, random_state=0) if fitted_on is None else fitted_on
    # the release's estimator, told that it will start from public topics (any start: the simulation fits its own)
    model = _dp_vem(plan, count.value, np.full((request.n_topics, V), 1.0 / V))
    n_draws = SIMULATION_DRAWS if n_draws is None else n_draws
    return forecast_on_reference(model, fitted_on, count.value, n_draws=n_draws, top_n=min(10, V - 1),
                                 vocabulary_share=vocabulary_share, score_on=reference)


def _dp_vem_forecast(*, epsilon, delta, unit, neighbours, n_units, n_topics, n_words, public_start,
                     vocabulary_share, signal):
    from ..variational import noise_scale
    from ..forecast import forecast_from_sigma

    # the sigma of the releases the estimator will make: its iterations and its neighbour relation
    sigma = noise_scale(epsilon, delta, neighbours=neighbours, n_iterations=DP_VEM_ITERATIONS[public_start])
    return forecast_from_sigma(sigma, n_topics, unit, n_units, n_words, signal=_signal(signal, n_topics, n_words),
                               top_n=_top_n(n_words), public_start=public_start, vocabulary_share=vocabulary_share)


# -- output perturbation of TopicDP's f with the global sensitivity ----------------------------------------

def _output_perturbation(kind: str) -> EstimatorFactory:
    def build(plan: "PlanView", n_units: int, start: "np.ndarray | None"):
        from sklearn.base import clone

        r, topics = plan.request, plan.budget.topics
        return clone(r.topicdp).set_params(epsilon=topics.epsilon, delta=topics.delta, unit=str(r.unit),
                                           neighbours=str(r.neighbours), sensitivity="global", mechanism=kind,
                                           sampling=None, random_state=r.seed)
    return build


def _output_perturbation_planned(kind: str) -> Callable[["PlanView"], list]:
    # the row's own TopicDP, which reads no unit count: its entry is the one its fit checks
    return lambda plan: _output_perturbation(kind)(plan, 0, None).planned_entries(plan.request.n_topics)


def _output_perturbation_forecast(kind: str):
    def predict(*, epsilon, delta, unit, n_units, n_topics, n_words, vocabulary_share, signal, **_):
        from ..forecast import forecast_readability
        from ..rdp import calibrate_gaussian

        if kind == "gaussian":
            sigma = calibrate_gaussian(epsilon, delta, math.sqrt(2 * n_topics), method="analytic")
        else:  # Laplace of scale 2K / epsilon: its standard deviation is sqrt(2) times that, read as a Gaussian's
            sigma = math.sqrt(2) * 2 * n_topics / epsilon
        return forecast_readability(sigma, _signal(signal, n_topics, n_words), n_units=n_units, unit=unit,
                                    top_n=_top_n(n_words), vocabulary_share=vocabulary_share)
    return predict


# -- spectral configurations --------------------------------------------------------------------------------

def _spectral(configuration: int) -> EstimatorFactory:
    def build(plan: "PlanView", n_units: int, start: "np.ndarray | None"):
        from ..spectral import DPSpectralMoments

        # n_units: the stated count the pipeline checked against its census (before filtering); the moments are
        # normalised by it, with units emptied by the vocabulary as zero contributions
        r, topics = plan.request, plan.budget.topics
        return DPSpectralMoments(n_topics=r.n_topics, alpha0=1.0, configuration=configuration, epsilon=topics.epsilon,
                          delta=topics.delta, unit=str(r.unit), random_state=r.seed, n_units=n_units)
    return build


def _spectral_forecast(configuration: int):
    def predict(*, epsilon, delta, unit, n_units, n_topics, n_words, **_) -> SpectralForecast | None:
        from ..spectral.recommend import predicted_noise

        if n_units < 3 or n_words < 3 or not 2 <= n_topics < n_words:
            return None
        noise, m2, feasible = predicted_noise(n_units, n_words, n_topics, 1.0, epsilon=epsilon, delta=delta)
        ok = feasible.get(configuration, True)
        verdict = "noise" if (m2[configuration] > 0.5 or not ok or noise[configuration] > 1.0) else "marginal"
        return SpectralForecast(configuration, m2[configuration], noise[configuration], ok, verdict)
    return predict


# -- DP-SVI ---------------------------------------------------------------------------------------------

#: DP-SVI's expected batch size; its Poisson sampling rate is this over the unit count
DPSVI_BATCH = 100


def _dpsvi(plan: "PlanView", n_units: int, start: "np.ndarray | None"):
    from ..baselines import DPStochasticVI

    # the sampling rate from the DP (or stated) count, never from the corpus: q must not depend on the data
    r, topics = plan.request, plan.budget.topics
    return DPStochasticVI(r.n_topics, epsilon=topics.epsilon, delta=topics.delta,
                 sampling_rate=min(1.0, DPSVI_BATCH / max(n_units, 1)), random_state=r.seed)


def _dpsvi_planned(plan: "PlanView") -> list:
    """DP-SVI's sampling rate waits for the count: planned as what it is calibrated to, an (epsilon, delta) pair
    (basic composition: an upper bound of its event's cost), re-planned exactly when it checks its event."""
    from ..rdp import ApproxEntry

    r, topics = plan.request, plan.budget.topics
    return [ApproxEntry("dpsvi (planned as its (epsilon, delta))", topics.epsilon, topics.delta, unit=str(r.unit),
                        neighbours=str(r.neighbours))]


def _signal(signal, n_topics: int, n_words: int):
    from ..forecast import dirichlet_signal

    return dirichlet_signal(n_topics, n_words, 0.15) if signal is None else signal


def _top_n(n_words: int) -> int:
    return min(10, n_words - 1)  # a tiny vocabulary still gets a forecast


_ROWS: dict[str, tuple] = {
    "dp-vem": (_dp_vem, _dp_vem_forecast, lambda plan: {}, None, _dp_vem_simulation),
    **{kind: (_output_perturbation(op), _output_perturbation_forecast(op),
              lambda plan: {"keep_nonprivate": plan.request.keep_nonprivate}, _output_perturbation_planned(op))
       for kind, op in (("gaussian-global", "gaussian"), ("laplace", "laplace"))},
    **{f"spectral-config-{c}": (_spectral(c), _spectral_forecast(c)) for c in (1, 2, 3, 4)},
    "dpsvi": (_dpsvi, None, lambda plan: {}, _dpsvi_planned),
}

#: every road of ``guarantee="dp"``, by its one name (the command line's, the report's and compare's)
MECHANISMS: dict[str, Road] = {
    name: Road(name, MECHANISM_SUMMARIES[name], name in FORECAST_MECHANISMS, MECHANISM_NEIGHBOURS[name],
               MECHANISM_UNITS[name], *_ROWS[name])
    for name in RIGOROUS_MECHANISMS
}


# -- the random-DP road: TopicDP with a sampled sensitivity (random DP, not DP) ------------------------------

#: the pairs of the random-DP road's pilot sample (:meth:`RandomDPRoad.pilot`)
PILOT_PAIRS = 2


class RandomDPRoad:
    """TopicDP over the request's model with a sensitivity sampled on the public reference P: (epsilon, delta,
    gamma)-random DP with respect to P, not DP. Its facts are a registry row's; with a public P the sample is a
    function of P and the model only, so a :class:`~topicdp.pipeline.run.Prepared` corpus keeps it."""

    name = "random-dp"

    @staticmethod
    def label(request: "ReleaseRequest") -> str:
        from .request import model_label

        return model_label(request.topicdp.model)

    def planned_entries(self, plan: "PlanView") -> list:
        """The release's entry at sensitivity 1 (sigma is proportional to the sensitivity for every calibration)."""
        from ..rdp import GaussianEntry, calibrate_gaussian

        r = plan.request
        a = r.topicdp
        sigma = calibrate_gaussian(r.epsilon, r.delta, 1.0, method=a.calibration)
        return [GaussianEntry("TopicDP release (planned)", sigma, 1.0, gamma=a.sampling.gamma, unit=str(r.unit),
                              neighbours=str(r.neighbours))]

    @staticmethod
    def forecast(request: "ReleaseRequest", sigma: float, n_words: int):
        """The readability forecast from the sampled sigma (public with a public P) and a public signal
        (:func:`topicdp.forecast.dirichlet_signal`), never from the private fit."""
        from ..forecast import forecast_readability

        return forecast_readability(sigma, _signal(None, request.n_topics, n_words), top_n=_top_n(n_words),
                                    unit=str(request.unit))

    @staticmethod
    def estimator(request: "ReleaseRequest", distribution: "Corpus | None" = None, *, start=None,
                  say: Callable[[str], None] | None = None):
        """The request's TopicDP template set for this release (budget, unit, ``n_jobs``, seed); with a public P
        (``distribution``, on the release's words) a toolkit model with a ``start_param`` starts from ``start``
        (topics fitted on P), which keeps f near one local optimum."""
        from sklearn.base import clone

        from .request import model_label

        template = request.topicdp
        privatizer = clone(template)  # its model a copy of the template's (TopicDP.__sklearn_clone__), changed below
        sampling, model = template.sampling, privatizer.model
        if distribution is not None:
            sampling = replace(sampling, distribution=distribution)
            start_param = getattr(model, "start_param", None)
            if start_param is not None and getattr(model, start_param, None) is None and not template.keep_model:
                if start is None:
                    from ..forecast import public_init

                    start = public_init(distribution, request.n_topics, unit=str(request.unit))
                model.set_params(**{start_param: start})
                if say is not None:
                    say(f"{model_label(model)} starts from topics fitted on the public reference")
        return privatizer.set_params(model=model, epsilon=request.epsilon, delta=request.delta, unit=str(request.unit),
                                     sampling=sampling, n_jobs=request.n_jobs, random_state=request.seed)

    def release(self, plan: "PlanView", prepared, say: Callable[[str], None], ledger: "PrivacyLedger | None"):
        """Sample the sensitivity (a pilot first), forecast, refuse noise unless the owner insists, and release;
        returns the release and its forecast."""
        from .compose import vocabulary_statement
        from .request import ReleaseRefused

        request = plan.request
        source = prepared.reader()
        corpus = source.prepare(request.vocabulary.words)
        words = tuple(corpus.vocabulary)
        distribution = start = None
        if prepared.reference is not None:
            distribution = prepared.reference_corpus(words, request.source)
            start = prepared.start(plan, words)
            say(f"public reference P: {request.reference}")
        privatizer = self.estimator(request, distribution, start=start, say=say)
        sample = prepared._cache.get(("sample", words)) if distribution is not None else None
        if sample is None:
            if distribution is not None:  # a public P: the pilot reads nothing private
                privatizer = self.pilot(privatizer, corpus, request, say)
            sample = privatizer.sample_sensitivity(corpus)
            if distribution is not None:
                prepared._cache[("sample", words)] = sample
        sigma = privatizer.noise_scale(sample.sensitivity)
        fc = self.forecast(request, sigma, corpus.n_words)
        say(f"sampled sensitivity {sample.sensitivity:.4g} over {sample.h} pairs: sigma {sigma:.4g}")
        for line in fc.lines():
            say("  " + line)
        if fc.verdict == "noise" and not request.release_anyway:
            raise ReleaseRefused("the forecast from the sampled sensitivity says this release would be noise; pass "
                                 "release_anyway=True to release it all the same (random DP spends "
                                 "nothing of a DP budget; the sampling's fits are done)")
        vocabulary = vocabulary_statement(request.vocabulary.kind, None, request.source.built_in,
                                          request.vocabulary.origin)  # where the words came from (a file, P's words)
        released = privatizer.fit(corpus, keep_nonprivate=request.keep_nonprivate, vocabulary_source=vocabulary,
                                  sensitivity_sample=sample, ledger=ledger).release_
        released.diagnostics.setdefault("corpus", {}).update(source.diagnostics())
        return released, fc

    @staticmethod
    def pilot(privatizer, corpus, request: "ReleaseRequest", say: Callable[[str], None]):
        """Forecast from the first :data:`PILOT_PAIRS` pairs of the sensitivity sample and refuse where even they say
        noise, before the rest are fitted; returns ``privatizer`` with its pair seed fixed, so that the full sample's
        first pairs are the pilot's.

        Why: the full sensitivity is the k-th smallest of h distances, so at most h - k exceed it. The pilot's m pairs
        are the sample's first (one child seed per pair; deterministic fits), so its (m - (h - k))-th smallest distance
        is a lower bound of the full sensitivity when m > h - k (else no pilot runs). Sigma grows with the sensitivity
        and the overlap falls with sigma: noise at the bound is noise at the full sample. P is public."""
        import numpy as np

        from ..samplers.progress import CostForecast
        from .request import ReleaseRefused

        sampling = privatizer.sampling
        _, h, k, _ = sampling.size()
        m = PILOT_PAIRS
        if sampling.random_state is None:
            entropy = np.random.SeedSequence().entropy
            assert isinstance(entropy, int)  # numpy draws an int when it is given no entropy
            sampling = replace(sampling, random_state=entropy % 2**63)
            privatizer = privatizer.set_params(sampling=sampling)
        if m <= h - k or m >= h:
            return privatizer
        # the same estimator, its sampling the pilot's for this one sample (so that it says its model's changes once)
        privatizer.set_params(sampling=replace(sampling, n_pairs=m, insecure_testing=True, cache_dir=None,
                                               max_minutes=None))
        try:
            sample = privatizer.sample_sensitivity(corpus)
        finally:
            privatizer.set_params(sampling=sampling)
        bound = float(np.sort(sample.deltas)[m - 1 - (h - k)])
        sigma = privatizer.noise_scale(bound)
        fc = RandomDPRoad.forecast(request, sigma, corpus.n_words)
        workers = max(1, min(effective_n_jobs(request.n_jobs), h))
        rest = CostForecast(h, float(np.median(sample.fit_seconds)) / 2, workers)
        say(f"pilot: the first {m} of the sample's {h} pairs in {sample.wall_seconds:.1f} s: sensitivity at least "
            f"{bound:.4g}, sigma at least {sigma:.4g}: forecast {fc.verdict}")
        if fc.verdict == "noise" and not request.release_anyway:
            raise ReleaseRefused(
                f"the pilot sample's forecast (the first {m} of the sensitivity sample's {h} pairs: a lower bound of "
                f"its sensitivity, sigma >= {sigma:.4g}) says this release would be noise, and the full sample can only "
                f"say noise too; pass release_anyway=True to release it all the same (random DP spends nothing of a "
                f"DP budget; the pilot sampled on the public P, {sample.wall_seconds:.1f} s, and the full sample's "
                f"{rest.n_fits} fits, about {rest.seconds:.0f} s, were not run)")
        return privatizer


#: the random-DP road (not a row of :data:`MECHANISMS`: its guarantee is not DP)
RANDOM_DP = RandomDPRoad()
