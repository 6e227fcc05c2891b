"""TopicDP: model-agnostic private release of any topic model's topic-word matrix.

Wang, Sharma, Feng, Shu & Hong, "A Model-Agnostic Approach to Differentially Private Topic Mining",
KDD 2022 (``papers/003_*``): fit the model, sample the Frobenius sensitivity of its topic-word matrix
over neighbouring datasets (Alg. 1), add Gaussian noise calibrated to (epsilon, delta) (Alg. 2), and
post-process. With a *sampled* sensitivity the release is (epsilon, delta, gamma)-random DP with respect
to the sampling distribution P — not differential privacy. With ``sensitivity="global"`` the provable
bound sqrt(2K) for row-stochastic matrices is used instead and the release is (epsilon, delta)-DP.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_delta, check_epsilon, check_gamma, check_option, check_random_state
from .adapters.base import TopicModelSpec
from .mechanisms import (
    check_row_stochastic,
    gaussian_perturbation,
    laplace_perturbation,
    simplex_l1_sensitivity,
    simplex_l2_sensitivity,
    to_simplex,
)
from .rdp import PrivacyLedger, calibrate_all, calibrate_gaussian
from .release import PrivateRelease
from .report import Check, PrivacyReport
from .samplers import sample_sensitivity
from .samplers.neighbours import PrivateResample, PublicReference

MECHANISMS = ("gaussian", "laplace")
SENSITIVITIES = ("sampled", "global")

VOCABULARY_NOTE = (
    "The vocabulary (the columns of the release) is treated as public. If it was built from the private "
    "texts, which words occur is not protected."
)


class TopicDP:
    """Release a topic model's topic-word matrix with calibrated noise.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1), default=1e-4
        For ``mechanism="laplace"`` (pure epsilon-DP) delta is reported as 0.
    gamma : float in (0, 0.5), default=0.1
        Confidence of the random-DP guarantee (sampled sensitivity only): h and k of Alg. 1 follow.
    unit : {"user", "document"}, default="user"
        Privacy unit. Users are the corpus' ``user_ids``; bound their contributions first with
        :meth:`Corpus.bound` where users are large.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
        ``"laplace"`` is TopicDP's baseline (Sec. 4.2): L1 global sensitivity 2K, epsilon-DP.
    sensitivity : {"sampled", "global"}, default="sampled"
        Gaussian only. ``"sampled"``: TopicDP Alg. 1 (random DP). ``"global"``: sqrt(2K) (DP).
    calibration : {"auto", "analytic", "rdp", "paper"}, default="auto"
        How sigma follows from (epsilon, delta, Delta); see :func:`topicdp.rdp.calibrate_gaussian`. The
        report also lists the sigma of the other methods.
    distribution : Corpus or None
        P for sensitivity sampling: a *public* reference corpus with the same vocabulary, or None to
        resample the private corpus' own records as TopicDP did (the report then says so).
    n_jobs : int, default=1
        Parallel workers for the 2h model fits (joblib; any joblib backend, e.g. Dask, applies).
    random_state : None or int
        Seed of the *noise*. None (default) draws from the operating system; a seeded release is marked
        ``seeded`` in its report and must not be published.
    sampler_random_state : None or int
        Seed of the neighbour-pair draws (reproducible, cacheable sensitivity).
    n_pairs, insecure_testing :
        Override h (testing only; see :func:`topicdp.samplers.sample_sensitivity`).
    cache_dir : path or None
        Cache sampled sensitivities (only for a fixed ``sampler_random_state``).
    progress : bool, default=False
        Progress bar during sampling.
    secure_noise : bool, default=False
        Draw the Gaussian noise as an exact discrete Gaussian on a power-of-two grid (Canonne, Kamath &
        Steinke 2020; :func:`topicdp.mechanisms.secure_gaussian`) instead of numpy's floating-point
        sampler, whose low-order bits can leak the data (Mironov 2012). Its guarantee carries over the
        RDP curve of the continuous Gaussian, so sigma is calibrated by ``"rdp"`` (``calibration``
        must be ``"auto"`` or ``"rdp"``); costs about 0.3 s per 100 x 5000 matrix.
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 1e-4,
        gamma: float = 0.1,
        *,
        unit: str = "user",
        mechanism: str = "gaussian",
        sensitivity: str = "sampled",
        calibration: str = "auto",
        distribution=None,
        n_jobs: int = 1,
        random_state: int | None = None,
        sampler_random_state: int | None = None,
        n_pairs: int | None = None,
        insecure_testing: bool = False,
        cache_dir=None,
        progress: bool = False,
        secure_noise: bool = False,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.gamma = check_gamma(gamma)
        self.unit = check_option(unit, "unit", ("user", "document"))
        self.mechanism = check_option(mechanism, "mechanism", MECHANISMS)
        self.sensitivity = check_option(sensitivity, "sensitivity", SENSITIVITIES)
        self.calibration = check_option(calibration, "calibration", ("auto", "analytic", "rdp", "paper"))
        if secure_noise and (self.mechanism != "gaussian" or self.calibration not in ("auto", "rdp")):
            raise ValueError("secure_noise=True needs mechanism='gaussian' and calibration 'auto' or 'rdp' "
                             "(the discrete Gaussian inherits the continuous Gaussian's RDP curve, not its exact profile)")
        self.secure_noise = secure_noise
        if secure_noise:
            self.calibration = "rdp"
        if self.mechanism == "laplace" and self.sensitivity != "global":
            raise ValueError("mechanism='laplace' uses the global L1 sensitivity 2K; set sensitivity='global'")
        self.distribution = distribution
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.sampler_random_state = sampler_random_state
        self.n_pairs = n_pairs
        self.insecure_testing = insecure_testing
        self.cache_dir = cache_dir
        self.progress = progress
        #: every release this privatizer made; reports state their composition (same data assumed)
        self.ledger = PrivacyLedger()

    # ------------------------------------------------------------------------------------------------
    def privatize(self, model: TopicModelSpec, corpus, *, keep_nonprivate: bool = False) -> PrivateRelease:
        """Fit ``model`` on ``corpus`` and release its topic-word matrix privately.

        Parameters
        ----------
        model : TopicModelSpec
            E.g. ``GensimLDA(10, random_state=0)`` or ``CallableModel(func, n_topics)``.
        corpus : Corpus
        keep_nonprivate : bool, default=False
            Keep the non-private matrix on the release for evaluation (never publish it).
        """
        if not isinstance(model, TopicModelSpec):
            raise TypeError(f"model must be a TopicModelSpec (see topicdp.adapters), got {type(model).__name__}")
        W = model.fit_topic_word(corpus)
        checks = [self._determinism_check(model, corpus, W)] if self.sensitivity == "sampled" else []
        rng = check_random_state(self.random_state)
        if self.mechanism == "laplace":
            noisy, report = self._laplace(W, model, checks, rng)
        elif self.sensitivity == "global":
            noisy, report = self._gaussian_global(W, model, checks, rng)
        else:
            noisy, report = self._gaussian_sampled(W, model, corpus, checks, rng)
        released, empty_rows = to_simplex(noisy)
        report.details.update(
            {
                "model": model.describe(),
                "corpus": {"n_docs": corpus.n_docs, "n_words": corpus.n_words, "n_users": corpus.n_users,
                           "fingerprint": corpus.fingerprint(), "construction": corpus.log.as_dict()},
                "postprocessing": "negative entries clipped to 0, rows renormalised to sum to 1 "
                f"({empty_rows} row(s) had no positive entry and became uniform)",
            }
        )
        report.notes.append(VOCABULARY_NOTE)
        self._compose(report)
        return PrivateRelease(
            topic_word=released,
            noisy=noisy,
            vocabulary=corpus.vocabulary,
            report=report,
            nonprivate=W if keep_nonprivate else None,
        )

    # ------------------------------------------------------------------------------------------------
    def _base_report(self, **kwargs) -> PrivacyReport:
        return PrivacyReport(unit=self.unit, neighbours="replace-one", seeded=self.random_state is not None, **kwargs)

    def _gaussian_sampled(self, W, model, corpus, checks, rng):
        distribution = None
        if self.distribution is not None:
            distribution = PublicReference(self.distribution, self.unit)
        else:
            distribution = PrivateResample(corpus, self.unit)
        sample = sample_sensitivity(
            model,
            corpus,
            self.gamma,
            unit=self.unit,
            distribution=distribution,
            n_pairs=self.n_pairs,
            insecure_testing=self.insecure_testing,
            n_jobs=self.n_jobs,
            random_state=self.sampler_random_state,
            cache_dir=self.cache_dir,
            progress=self.progress,
        )
        if sample.sensitivity <= 0:
            raise ValueError(
                "the sampled sensitivity is 0: f gave identical output on every sampled neighbouring pair. "
                "Check that the model uses its input; a zero-noise release is not offered."
            )
        checks.append(Check("sample size meets Thm. 1 (TopicDP)", sample.sufficient,
                            f"h={sample.h}, k={sample.k} for gamma={self.gamma:g}"))
        sigma = calibrate_gaussian(self.epsilon, self.delta, sample.sensitivity, method=self.calibration)
        report = self._base_report(
            mechanism="gaussian-output-perturbation",
            guarantee="random-DP" if sample.sufficient else "none",
            epsilon=self.epsilon,
            delta=self.delta,
            gamma=self.gamma,
            sampling_distribution=sample.distribution,
            sensitivity=sample.sensitivity,
            sensitivity_method=f"sampled: k-th ({sample.k}) smallest of h={sample.h} Frobenius distances over "
            "neighbouring pairs drawn from P (TopicDP Alg. 1)",
            sigma=sigma,
            calibration=self.calibration,
            sigma_alternatives=calibrate_all(self.epsilon, self.delta, sample.sensitivity),
            checks=checks,
            details={"sensitivity_sample": sample.summary()},
        )
        if not sample.sufficient:
            report.notes.insert(0, f"NO GUARANTEE: only {sample.h} neighbouring pairs were sampled, fewer than "
                                   f"Thm. 1 requires for gamma={self.gamma:g} (insecure_testing).")
        if sample.distribution["kind"] == "private-resample":
            report.notes.append("P resampled the private corpus itself (TopicDP's choice): the sensitivity was "
                                "computed from the private data and is not itself protected.")
        return self._gaussian_noise(W, sigma, report, rng), report

    @staticmethod
    def _require_simplex(W, checks, bound: str, option: str) -> None:
        """The global bounds hold only for row-stochastic matrices: check, record, refuse otherwise."""
        stochastic, detail = check_row_stochastic(W)
        checks.append(Check(f"rows on the simplex (needed for the {bound} bound)", stochastic, detail))
        if not stochastic:
            raise ValueError(f"{option} needs a model whose topics are probability vectors: {detail}")

    def _gaussian_global(self, W, model, checks, rng):
        self._require_simplex(W, checks, "sqrt(2K)", "sensitivity='global'")
        delta_2 = simplex_l2_sensitivity(W.shape[0])
        sigma = calibrate_gaussian(self.epsilon, self.delta, delta_2, method=self.calibration)
        report = self._base_report(
            mechanism="gaussian-output-perturbation",
            guarantee="approx-DP",
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=delta_2,
            sensitivity_method="global bound sqrt(2K) for row-stochastic K x V matrices",
            sigma=sigma,
            calibration=self.calibration,
            sigma_alternatives=calibrate_all(self.epsilon, self.delta, delta_2),
            checks=checks,
            notes=["The bound holds for any two datasets, so the guarantee covers add/remove neighbours too."],
        )
        return self._gaussian_noise(W, sigma, report, rng), report

    def _laplace(self, W, model, checks, rng):
        self._require_simplex(W, checks, "2K", "mechanism='laplace'")
        delta_1 = simplex_l1_sensitivity(W.shape[0])
        scale = delta_1 / self.epsilon
        report = self._base_report(
            mechanism="laplace-output-perturbation",
            guarantee="approx-DP",
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity=delta_1,
            sensitivity_method="global L1 bound 2K for row-stochastic K x V matrices (TopicDP Sec. 4.2)",
            sigma=scale,
            calibration="laplace (scale = sensitivity / epsilon)",
            checks=checks,
            notes=["Pure epsilon-DP (delta = 0); 'sigma' is the Laplace scale b."],
        )
        return laplace_perturbation(W, scale, rng), report

    def _gaussian_noise(self, W, sigma: float, report: PrivacyReport, rng) -> np.ndarray:
        if not self.secure_noise:
            return gaussian_perturbation(W, sigma, rng)
        from .mechanisms import secure_gaussian

        release = secure_gaussian(W, sigma, sensitivity=report.sensitivity, random_state=self.random_state)
        report.details["secure_noise"] = {
            "sampler": "exact discrete Gaussian (Canonne, Kamath & Steinke 2020), OS randomness"
            + (" (seeded: NOT secure)" if release.seeded else ""),
            "grid": release.grid,
            "scale_units": release.scale_units,
            "noise_scale": release.noise_scale,
            "sensitivity_units": release.sensitivity_units,
            "rho": release.sensitivity_units ** 2 / (2.0 * release.scale_units ** 2),
        }
        report.sigma = release.noise_scale  # the scale actually used, >= the calibrated sigma
        return release.values

    def _compose(self, report: PrivacyReport) -> None:
        """Add this release to the ledger and state the total over all of this privatizer's releases."""
        name = f"release {len(self.ledger) + 1}"
        secure = report.details.get("secure_noise")
        if report.mechanism.startswith("laplace"):
            self.ledger.add_laplace(name, report.sigma, report.sensitivity)
        elif secure is not None:
            # The discrete release is rho-zCDP with rho = (Delta^Z)^2 / (2 s^2) in grid units (Canonne, Kamath &
            # Steinke 2020, Thm. 4); (sigma, Delta) = (s g, Delta) would understate it, since rounding to the
            # grid makes Delta^Z > Delta / g. Its totals then exclude the continuous exact profile.
            self.ledger.add_discrete_gaussian(name, secure["scale_units"], secure["sensitivity_units"])
        else:
            self.ledger.add_gaussian(name, report.sigma, report.sensitivity)
        report.composition = self.ledger.entries()
        report.composition_total = {
            f"epsilon at delta={self.delta:g} ({method})": eps for method, eps in self.ledger.totals(self.delta).items()
        }
        if len(self.ledger) > 1:
            report.notes.append(
                f"This privatizer has made {len(self.ledger)} releases; if they are of the same data, the totals "
                "under composition_total apply" + (
                    f" and the random-DP failure probabilities add up (gamma total <= {len(self.ledger) * self.gamma:g})."
                    if report.guarantee == "random-DP" else "."
                )
            )

    @staticmethod
    def _determinism_check(model, corpus, W) -> Check:
        """f must be deterministic for sampled sensitivities to mean anything: refit once and compare."""
        again = model.fit_topic_word(corpus)
        same = bool(np.array_equal(W, again))
        if not same:
            raise ValueError(
                f"model {model.name!r} is not deterministic (two fits on the same corpus differ by "
                f"{np.linalg.norm(W - again):.3g} in Frobenius norm); fix its seed and threads"
            )
        return Check("f is deterministic (two fits bit-identical)", True, "")
