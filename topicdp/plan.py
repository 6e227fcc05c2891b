"""Choose a mechanism and forecast what it will release, before the private data is touched (issue 9).

:func:`plan_release` takes only public quantities -- the guarantee asked for, epsilon, delta, the unit,
the number of units n (stated public), K, V and an assumed or public topic sparsity -- and returns the
forecast readability of every rigorous mechanism that has a closed-form noise scale, and the one the rule
picks:

    rule: among ``dp-vem``, ``gaussian-global`` and ``laplace``, the largest forecast top-10 overlap;
          ties go to the first in that order.

``dp-vem`` (:class:`topicdp.variational.DPVariationalLDA`) perturbs statistics whose per-unit influence is
O(1/n), so it is the one that improves with more data; the two output-perturbation baselines add noise of a
fixed scale (sqrt(2K) or 2K sensitivity) to each entry and are readable only at very large epsilon. The
spectral configurations and DP-SVI are not forecast here (their noise passes through a non-linear pipeline)
and run only when named.

These closed forms see the noise but not the corpus. With a public reference corpus, ``privatize`` also runs
``dp-vem`` on it at the private signal-to-noise ratio (:func:`topicdp.variational.forecast_on_reference`)
before the topics' budget is spent, which also sees the common words a noise release keeps and how far the
algorithm agrees with LDA on this kind of text (``docs/results/forecast_validation.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._names import FORECAST_MECHANISMS, GUARANTEES, RIGOROUS_MECHANISMS, UNITS
from ._validation import check_delta, check_epsilon, check_int, check_option
from .forecast import ReadabilityForecast, dirichlet_signal, forecast_readability



@dataclass(frozen=True)
class ReleasePlan:
    """The chosen mechanism, why, and each candidate's forecast (None where none can be made)."""

    mechanism: str
    reason: str
    forecasts: dict

    @property
    def forecast(self) -> ReadabilityForecast | None:
        return self.forecasts.get(self.mechanism)

    def lines(self) -> list[str]:
        out = [f"plan: {self.mechanism} ({self.reason})"]
        for name, fc in self.forecasts.items():
            if fc is not None:
                out.append(f"  forecast {name:<16} top-10 overlap with LDA {fc.overlap_with_lda:.2f}: {fc.verdict} "
                           f"(noise {fc.noise_to_signal:.2g} x the 10th-largest topic-word probability)")
        if self.forecast is not None:
            out += ["  " + line for line in self.forecast.lines()[1:]]
        return out


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
                       n_words: int, signal=None, mass_per_unit: float | None = None):
    """Forecast one mechanism's readability from public quantities: a :class:`ReadabilityForecast`, a
    :class:`SpectralForecast` for a spectral configuration, or None (DP-SVI has none)."""
    from .rdp import calibrate_gaussian

    if mechanism.startswith("spectral-config-"):
        return _spectral_forecast(int(mechanism[-1]), epsilon=epsilon, delta=delta, n_units=n_units,
                                  n_topics=n_topics, n_words=n_words)

    if signal is None:
        signal = dirichlet_signal(n_topics, n_words, 0.15)
    top_n = min(10, n_words - 1)  # a tiny vocabulary still gets a forecast
    common: dict = dict(n_units=n_units, unit=unit, top_n=top_n)
    if mechanism == "dp-vem":
        from .variational import DPVariationalLDA, forecast

        model = DPVariationalLDA(n_topics, epsilon=epsilon, delta=delta, unit=unit)
        return forecast(model, n_units, n_words, mass_per_unit=mass_per_unit, signal=signal, top_n=top_n)
    if mechanism == "gaussian-global":
        sigma = calibrate_gaussian(epsilon, delta, math.sqrt(2 * n_topics), method="analytic")
        return forecast_readability(sigma, signal, **common)
    if mechanism == "laplace":  # scale 2K / epsilon; its standard deviation sqrt(2) times that, as a Gaussian
        return forecast_readability(math.sqrt(2) * 2 * n_topics / epsilon, signal, **common)
    return None


def plan_release(*, guarantee: str = "dp", mechanism: str | None = None, epsilon: float, delta: float, unit: str,
                 n_units: int, n_topics: int, n_words: int, signal=None,
                 mass_per_unit: float | None = None) -> ReleasePlan:
    """Pick the mechanism for ``guarantee`` by the module's rule (or take ``mechanism``) and forecast it.

    Parameters
    ----------
    guarantee : {"dp", "random-dp"}
        ``random-dp`` is the agnostic road (TopicDP over a model; its noise scale is known only after the
        sensitivity sample, so it has no forecast here).
    mechanism : str, optional
        Overrides the rule; one of :data:`RIGOROUS_MECHANISMS` for ``dp``.
    epsilon, delta, unit, n_units, n_topics, n_words
        Public quantities (n_units as stated by the owner).
    signal : (K, V) array, optional
        Public reference topics; default rows ~ Dirichlet(0.15).
    mass_per_unit : float, optional
        See :func:`topicdp.variational.forecast`.
    """
    check_option(guarantee, "guarantee", GUARANTEES)
    check_epsilon(epsilon)
    check_delta(delta)
    check_option(unit, "unit", UNITS)
    for value, name in ((n_units, "n_units"), (n_topics, "n_topics"), (n_words, "n_words")):
        check_int(value, name, low=1)
    if guarantee == "random-dp":
        return ReleasePlan("topicdp", "random DP: TopicDP over the chosen model, noise from a sampled sensitivity",
                           {"topicdp": None})
    if mechanism is not None:
        check_option(mechanism, "mechanism", RIGOROUS_MECHANISMS)
    kwargs: dict = dict(epsilon=epsilon, delta=delta, unit=unit, n_units=n_units, n_topics=n_topics, n_words=n_words,
                  signal=signal, mass_per_unit=mass_per_unit)
    forecasts: dict[str, ReadabilityForecast | None] = {
        name: forecast_mechanism(name, **kwargs) for name in FORECAST_MECHANISMS}
    if mechanism is not None:
        if mechanism not in forecasts:
            forecasts[mechanism] = None
        return ReleasePlan(mechanism, "named by the caller", forecasts)
    overlaps = {}
    for name in FORECAST_MECHANISMS:  # each has a closed-form forecast (topicdp._names)
        fc = forecasts[name]
        if fc is None:
            raise RuntimeError(f"no forecast for {name}, one of FORECAST_MECHANISMS")
        overlaps[name] = fc.expected_overlap
    best = max(FORECAST_MECHANISMS, key=overlaps.__getitem__)  # max keeps the first tie
    return ReleasePlan(best, "largest forecast top-10 overlap among rigorous mechanisms", forecasts)
