"""Forecast what each mechanism will release, from public quantities only, before the private data is touched.

:func:`forecast_mechanism` takes the budget of the topics, the unit, the number of units (stated public or a
DP count), K and V, and an assumed or public topic sparsity, and forecasts one mechanism: a
:class:`~topicdp.forecast.ReadabilityForecast` for the mechanisms with a closed-form noise scale, a
:class:`SpectralForecast` (whether its run-time utility check can pass) for a spectral configuration, None
for DP-SVI. The release pipeline decides with it (:func:`topicdp.pipeline.decide`, whose rule is: among
``dp-vem``, ``gaussian-global`` and ``laplace``, the largest forecast top-10 overlap; ties go to the first), and
refuses where the chosen forecast misses the unit's targets (:data:`topicdp.forecast.TARGETS`: overlap and NPMI
contrast, so that ten lists of common words are called so).

``dp-vem`` (:class:`topicdp.variational.DPVariationalLDA`) perturbs statistics whose per-unit influence is
O(1/n), so it is the one that improves with more data; the two output-perturbation baselines add noise of a
fixed scale (sqrt(2K) or 2K sensitivity) to each entry and are readable only at very large epsilon.

These closed forms see the noise but not the corpus. With a public reference corpus, ``privatize`` runs
``dp-vem`` on it at the private signal-to-noise ratio (:func:`topicdp.variational.forecast_on_reference`) before
any refusal of a dp-vem release and before the topics' budget is spent, and decides on that simulation, not on the
closed form: it sees the common words a noise release keeps and how far the algorithm agrees with LDA on this kind
of text (``docs/results/forecast_validation.md``, ``docs/results/decision_validation.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .forecast import dirichlet_signal, forecast_readability


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


def _spectral_forecast(configuration: int, *, epsilon: float, delta: float, n_units: int, n_topics: int,
                       n_words: int) -> SpectralForecast | None:
    from .spectral.recommend import predicted_noise

    if n_units < 3 or n_words < 3 or not 2 <= n_topics < n_words:
        return None
    noise, m2, feasible = predicted_noise(n_units, n_words, n_topics, 1.0, epsilon=epsilon, delta=delta)
    ok = feasible.get(configuration, True)
    verdict = "noise" if (m2[configuration] > 0.5 or not ok or noise[configuration] > 1.0) else "marginal"
    return SpectralForecast(configuration, m2[configuration], noise[configuration], ok, verdict)


def forecast_mechanism(mechanism: str, *, epsilon: float, delta: float, unit: str, n_units: int, n_topics: int,
                       n_words: int, signal=None, mass_per_unit: float | None = None, public_start: bool = False,
                       vocabulary_share: float = 1.0):
    """Forecast one mechanism's readability from public quantities: a :class:`ReadabilityForecast`, a
    :class:`SpectralForecast` for a spectral configuration, or None (DP-SVI has none). ``public_start``: dp-vem
    will start from topics fitted on a public reference (else from a random start, which agrees less with LDA:
    :data:`topicdp.forecast.RANDOM_START_AGREEMENT`). ``vocabulary_share``: the release's vocabulary size over the
    owner's ordinary one (a DP selection that kept fewer words), which the contrast forecast reads."""
    from .rdp import calibrate_gaussian

    if mechanism.startswith("spectral-config-"):
        return _spectral_forecast(int(mechanism[-1]), epsilon=epsilon, delta=delta, n_units=n_units,
                                  n_topics=n_topics, n_words=n_words)

    if signal is None:
        signal = dirichlet_signal(n_topics, n_words, 0.15)
    top_n = min(10, n_words - 1)  # a tiny vocabulary still gets a forecast
    common: dict = dict(n_units=n_units, unit=unit, top_n=top_n, vocabulary_share=vocabulary_share)
    if mechanism == "dp-vem":
        from .variational import DPVariationalLDA, forecast

        model = DPVariationalLDA(n_topics, epsilon=epsilon, delta=delta, unit=unit)
        return forecast(model, n_units, n_words, mass_per_unit=mass_per_unit, signal=signal, top_n=top_n,
                        public_start=public_start, vocabulary_share=vocabulary_share)
    if mechanism == "gaussian-global":
        sigma = calibrate_gaussian(epsilon, delta, math.sqrt(2 * n_topics), method="analytic")
        return forecast_readability(sigma, signal, **common)
    if mechanism == "laplace":  # scale 2K / epsilon; its standard deviation sqrt(2) times that, as a Gaussian
        return forecast_readability(math.sqrt(2) * 2 * n_topics / epsilon, signal, **common)
    return None
