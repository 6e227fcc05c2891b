"""The registry of mechanisms: each once, with its guarantee, what it supports, its forecast and its estimator.

Names, one-line summaries, units and neighbour relations come from :mod:`topicdp._names` (pure Python, so
the command line builds its ``--help`` without numpy); this module adds, per mechanism, the forecast of its
readability from public facts (:meth:`Mechanism.forecast`) and the private estimator a Python user would build
for the plan (:meth:`Mechanism.estimator`). :meth:`Mechanism.release` fits it on the prepared corpus, recording
its releases in the pipeline's ledger, which already holds the unit count and the DP vocabulary: the report
composes them all (:mod:`topicdp.pipeline.compose`). ``compare`` runs the same rows.

The forecasts see the noise but not the corpus. ``dp-vem`` perturbs statistics whose per-unit influence is
O(1/n), so it is the one that improves with more data; the two output-perturbation baselines add noise of a
fixed scale (sqrt(2K) or 2K sensitivity) to each entry and are readable only at very large epsilon. With a
public reference the pipeline also simulates ``dp-vem`` on it (:func:`topicdp.variational.forecast_on_reference`)
and decides on that simulation (``docs/results/forecast_validation.md``, ``docs/results/decision_validation.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Mechanism:
    """One mechanism of ``guarantee="dp"``: what it supports, how it is forecast, and its estimator.

    Attributes
    ----------
    chosen_by_rule : bool
        Whether the plan's rule picks among it (it has a closed-form readability forecast); the others run only
        when named.
    estimator : callable
        ``estimator(plan, n_units, start)``: the private estimator of the plan's topic step (its budget, unit,
        neighbour relation, K and seed), as a Python user would build it.
    """

    name: str
    summary: str
    chosen_by_rule: bool
    neighbours: tuple[str, ...]
    units: tuple[str, ...]
    estimator: EstimatorFactory
    predict: Callable[..., Any] | None = None
    fit_params: Callable[["PlanView"], dict] = lambda plan: {}

    def forecast(self, *, epsilon: float, delta: float, unit: str, neighbours: str, n_units: int, n_topics: int,
                 n_words: int, public_start: bool = False, vocabulary_share: float = 1.0, signal=None):
        """The readability forecast of this mechanism from public quantities: a
        :class:`~topicdp.forecast.ReadabilityForecast`, a :class:`SpectralForecast` for a spectral configuration,
        or None (DP-SVI has none). ``epsilon``, ``delta``: the topics' budget. ``public_start``: dp-vem will start
        from topics fitted on a public reference (else at random, which agrees less with LDA:
        :data:`topicdp.forecast.RANDOM_START_AGREEMENT`). ``vocabulary_share``: the release's vocabulary size over
        the owner's ordinary one (a DP selection that kept fewer words), which the contrast forecast reads."""
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

    The check (DeCarolis et al. 2020, App. I.1-I.2; :mod:`topicdp.spectral.configurations`) needs the released
    M2's noise below half its spectral gap, at most ``lambda_k / 2``; configurations 3-4 also need their
    Procedure-1 eigengap bound to be positive. :func:`topicdp.spectral.recommend.predicted_noise` gives both
    from the sensitivities, the budget and a prior guess of ``lambda_k`` (Dirichlet(0.1) topics, symmetric
    alpha). ``noise`` here means the check is forecast to fail, so the release would not be usable.
    """

    configuration: int
    m2_noise: float
    relative_noise: float
    feasible: bool
    verdict: str
    overlap_with_lda = None
    expected_overlap = None

    @property
    def refuses(self) -> bool:
        """Whether the release is refused unless the owner insists: the utility check is forecast to fail."""
        return self.verdict == "noise"

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
                            neighbours=str(r.neighbours), n_iterations=DP_VEM_ITERATIONS[start is not None],
                            init=start, n_jobs=effective_n_jobs(r.n_jobs), random_state=r.seed)


def _dp_vem_forecast(*, epsilon, delta, unit, neighbours, n_units, n_topics, n_words, public_start,
                     vocabulary_share, signal):
    from ..variational import forecast_from_sigma, noise_scale

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
                                            neighbours=str(r.neighbours), sensitivity="global", mechanism=kind, sampling=None,
                                            random_state=r.seed)
    return build


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


def _keep_nonprivate(plan: "PlanView") -> dict:
    return {"keep_nonprivate": plan.request.keep_nonprivate}


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


def _signal(signal, n_topics: int, n_words: int):
    from ..forecast import dirichlet_signal

    return dirichlet_signal(n_topics, n_words, 0.15) if signal is None else signal


def _top_n(n_words: int) -> int:
    return min(10, n_words - 1)  # a tiny vocabulary still gets a forecast


_ROWS: dict[str, tuple[EstimatorFactory, Callable[..., Any] | None, Callable[["PlanView"], dict]]] = {
    "dp-vem": (_dp_vem, _dp_vem_forecast, lambda plan: {}),
    "gaussian-global": (_output_perturbation("gaussian"), _output_perturbation_forecast("gaussian"), _keep_nonprivate),
    "laplace": (_output_perturbation("laplace"), _output_perturbation_forecast("laplace"), _keep_nonprivate),
    **{f"spectral-config-{c}": (_spectral(c), _spectral_forecast(c), lambda plan: {}) for c in (1, 2, 3, 4)},
    "dpsvi": (_dpsvi, None, lambda plan: {}),
}

#: every mechanism of ``guarantee="dp"``, by its one name (the command line's, the report's and compare's)
MECHANISMS: dict[str, Mechanism] = {
    name: Mechanism(name, MECHANISM_SUMMARIES[name], name in FORECAST_MECHANISMS, MECHANISM_NEIGHBOURS[name],
                    MECHANISM_UNITS[name], *_ROWS[name])
    for name in RIGOROUS_MECHANISMS
}
