"""TopicDP: model-agnostic private release of any topic model's topic-word matrix.

Wang, Sharma, Feng, Shu & Hong, "A Model-Agnostic Approach to Differentially Private Topic Mining",
KDD 2022 (``papers/003_*``): fit the model, sample the Frobenius sensitivity of its topic-word matrix
over neighbouring datasets (Alg. 1), add Gaussian noise calibrated to (epsilon, delta) (Alg. 2), and
post-process. With a *sampled* sensitivity the release is (epsilon, delta, gamma)-random DP with respect
to the sampling distribution P — not differential privacy. With ``sensitivity="global"`` the provable
bound sqrt(2K) for row-stochastic matrices is used instead and the release is (epsilon, delta)-DP.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, TransformerMixin

from ._names import (BOUND_PARAMETERS, DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_NEIGHBOURS, DEFAULT_UNIT, SENSITIVITIES,
                     Neighbours, Unit)
from ._progress import timed
from ._repeats import warn_on_repeated_release
from ._validation import check_privacy_parameters, check_int, check_option, check_random_state, store_init
from .adapters.base import CountTags, TopicModelSpec
from .adapters.wrap import WrappedModel, copy_model, model_kind, wrap_model
from .corpus import as_corpus
from .mechanisms import (
    check_row_stochastic,
    gaussian_perturbation,
    laplace_perturbation,
    simplex_l1_sensitivity,
    simplex_l2_sensitivity,
    to_simplex,
)
from .mechanisms.postprocess import project_to_simplex
from .rdp import PrivacyLedger, calibrate_all, calibrate_gaussian
from .rdp.ledger import DiscreteGaussianEntry, Entry, GaussianEntry, LaplaceEntry
from .private_release import PrivateRelease, VocabularyStatement, vocabulary_of
from .report import STEP_FIELDS, Check, ReportParts, compose_report, ledger_totals, total
from .samplers import PRIVATE_ORACLE, SensitivitySample, SensitivitySampling, sample_sensitivity
from .samplers.neighbours import ResampledRecords

MECHANISMS = ("gaussian", "laplace")
CALIBRATIONS = ("auto", "analytic", "rdp", "paper")

PRIVATE_ORACLE_NOTE = (
    "PRIVATE ORACLE (explicit opt-in): P resampled the private corpus itself, as TopicDP did. The sampled "
    "sensitivity and the noise scale sigma are functions of the private data released without noise: sigma "
    "alone can give an outlier away (this project's audit measured epsilon >= 9.5 from the noise scale at a "
    "claimed epsilon of 1). The guarantee stated above does not cover that leak."
)

#: The report's fields that follow from the sensitivity, and their status on the global and Laplace roads.
_NOISE_FIELDS = ("report.sensitivity", "report.sigma", "report.sigma_alternatives", "report.composition",
                 "report.composition_total", "report.details.secure_noise")
_GLOBAL_STATUS = "public: a function of K and the stated (epsilon, delta) only"

#: The status of the noisy matrix and of what is computed from it, by the release's guarantee.
_NOISE_STATUSES = {
    "approx-DP": ("DP", "post-processing"),
    "random-DP": ("random-DP: (epsilon, delta, gamma)-random DP with respect to P, not DP (see the guarantee)",
                  "post-processing"),
    "none": ("NOT COVERED: the noise was calibrated to a sensitivity sample smaller than the sizing asks for, so "
             "no guarantee holds (see the notes)", "NOT COVERED: computed from noisy, which no guarantee covers"),
}


class TopicDP(CountTags, MetaEstimatorMixin, TransformerMixin, BaseEstimator):
    """Release a topic model's topic-word matrix with calibrated noise: a meta-estimator over the model.

    It has no plan (no count, no forecast, no refusal): the planned run of this road is :func:`topicdp.release`
    with ``agnostic=TopicDP(model, ...)``. ``fit(corpus)`` fits ``model`` on the private corpus, calibrates the
    noise and sets ``release_``; the constructor only stores its arguments (checked when :meth:`fit` starts).

    Parameters
    ----------
    model : TopicModelSpec or a model of :data:`topicdp.adapters.wrap.WHAT_CAN_BE_WRAPPED`
        f: corpus -> (K, V), deterministic: an adapter (:mod:`topicdp.adapters`), or a user's model turned into
        one from its configuration (:func:`topicdp.adapters.wrap.wrap_model`; its fitted state, which would
        publish topics of the private data, is never used). On the sampled road with a public P an LDA gets the
        toolkit's stable form (a start fitted on P, batch learning); every change is in the report's notes.
    epsilon, delta : float, default=3.0, 1e-6
        For ``mechanism="laplace"`` (pure epsilon-DP) delta is reported as 0.
    neighbours : {"replace-one", "add-remove"}, optional
        Default: add/remove on the global and Laplace roads (their bounds hold for any two datasets) and
        replace-one on the sampled road, whose sampler draws replace-one pairs and can state nothing else.
    mechanism : {"gaussian", "laplace"}, default="gaussian"
        ``"laplace"`` is TopicDP's baseline (Sec. 4.2): L1 global sensitivity 2K, epsilon-DP.
    sensitivity : {"sampled", "global"}, default="sampled"
        ``"sampled"``: TopicDP Alg. 1, random DP with respect to P, not DP. ``"global"``: sqrt(2K), DP.
    calibration : {"auto", "analytic", "rdp", "paper"}, default="auto"
        How sigma follows from (epsilon, delta, Delta) (:func:`topicdp.rdp.calibrate_gaussian`).
    sampling : SensitivitySampling
        P, gamma, the sizing and the sampler's options; required with ``sensitivity="sampled"`` only. P is a
        public reference corpus, or the explicit ``"private-oracle"`` opt-in whose report says what it leaks.
    n_jobs : int, default=1
        Parallel workers for the 2h model fits (joblib).
    random_state : None or int
        Seed of the noise; a seeded release is marked ``seeded``.
    keep_model : bool, default=False
        Keep a wrapped ``model``'s parameters instead of the stable form (determinism's changes are still made).
    secure_noise : bool, default=False
        Draw an exact discrete Gaussian (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for
        Differential Privacy"; :func:`topicdp.mechanisms.secure_gaussian`) instead of floating-point noise, whose
        low-order bits can leak (Mironov 2012). It inherits the continuous Gaussian's RDP curve only, so sigma is
        calibrated by ``"rdp"``.

    Attributes: ``release_``, ``topic_word_``, ``report_``, ``n_features_in_``, ``model_`` (f, the spec fitted)
    and ``model_changes_`` (every change made to the given ``model``).

    >>> import numpy as np
    >>> from topicdp import GensimLDA, TopicDP, embedded_corpus
    >>> corpus = embedded_corpus().subset_documents(np.arange(60))
    >>> privatizer = TopicDP(GensimLDA(3, random_state=0), epsilon=1.0, sensitivity="global", random_state=0)
    >>> release = privatizer.fit(corpus).release_
    >>> release.topic_word.shape == (3, corpus.n_words), release.report.guarantee
    (True, 'approx-DP')
    """

    def __init__(
        self,
        model: Any,
        *,
        epsilon: float = DEFAULT_EPSILON,
        delta: float = DEFAULT_DELTA,
        unit: Unit | str = DEFAULT_UNIT,
        neighbours: Neighbours | str | None = None,
        mechanism: str = "gaussian",
        sensitivity: str = "sampled",
        calibration: str = "auto",
        sampling: SensitivitySampling | None = None,
        n_jobs: int = 1,
        random_state: int | np.random.Generator | None = None,
        secure_noise: bool = False,
        keep_model: bool = False,
    ) -> None:
        store_init(self, locals())

    def __sklearn_clone__(self) -> "TopicDP":
        """``sklearn.base.clone``: an unfitted copy, the model copied by :func:`topicdp.adapters.wrap.copy_model`."""
        from sklearn.base import clone

        params = self.get_params(deep=False)
        model = copy_model(params.pop("model"))
        return type(self)(model, **{name: clone(value, safe=False) for name, value in params.items()})

    def _validate_params(self) -> None:
        """Check the parameters (by :meth:`fit`, and by the pipeline before any work), naming the parameter."""
        model_kind(self.model)  # TypeError saying what can be wrapped, and why a fitted state is not used
        if not isinstance(self.keep_model, (bool, np.bool_)):
            raise TypeError(f"keep_model must be True or False, got {self.keep_model!r}")
        check_privacy_parameters(self, optional=("neighbours",))
        check_option(self.mechanism, "mechanism", MECHANISMS)
        check_option(self.sensitivity, "sensitivity", SENSITIVITIES)
        check_option(self.calibration, "calibration", CALIBRATIONS)
        check_int(self.n_jobs, "n_jobs")
        if self.secure_noise and (self.mechanism != "gaussian" or self.calibration not in ("auto", "rdp")):
            raise ValueError("secure_noise=True needs mechanism='gaussian' and calibration 'auto' or 'rdp' "
                             "(the discrete Gaussian inherits the continuous Gaussian's RDP curve, not its exact profile)")
        if self.mechanism == "laplace" and self.sensitivity != "global":
            raise ValueError("mechanism='laplace' uses the global L1 sensitivity 2K; set sensitivity='global'")
        if not self._sampled:
            if self.sampling is not None:
                raise ValueError("sampling applies to mechanism='gaussian' with sensitivity='sampled' only")
            return
        if self._neighbours != Neighbours.REPLACE_ONE:
            raise ValueError("sensitivity='sampled' draws replace-one neighbour pairs: neighbours must be "
                             "'replace-one' (the global bounds cover 'add-remove' too)")
        if not isinstance(self.sampling, SensitivitySampling) or self.sampling.distribution is None:
            raise ValueError(
                "sensitivity='sampled' needs sampling=SensitivitySampling(distribution=P, ...): P a public reference "
                "Corpus (random DP with respect to a P independent of the private data), or 'private-oracle' to "
                "resample the private corpus itself (sigma then leaks; the report says so); or use "
                "sensitivity='global' for DP with the provable bound sqrt(2K)")

    @property
    def _neighbours(self) -> Neighbours:
        """The relation in effect: as given, else replace-one on the sampled road and the library's default elsewhere."""
        if self.neighbours is not None:
            return Neighbours(self.neighbours)
        return Neighbours.REPLACE_ONE if self._sampled else Neighbours(DEFAULT_NEIGHBOURS)

    @property
    def _sampled(self) -> bool:
        return (self.mechanism, self.sensitivity) == ("gaussian", "sampled")

    @property
    def _sampler(self) -> SensitivitySampling:
        """``sampling`` on the sampled road (where :meth:`_validate_params` has checked that it is given)."""
        assert isinstance(self.sampling, SensitivitySampling)
        return self.sampling

    @property
    def _reference(self) -> Any:
        """The public reference Corpus P resamples (sampled road, public P)."""
        d = self._sampler.distribution
        return d.reference if isinstance(d, ResampledRecords) else d

    @property
    def _calibration(self) -> str:
        """The calibration in effect: the secure sampler inherits only the continuous Gaussian's RDP curve."""
        return "rdp" if self.secure_noise else self.calibration

    # ------------------------------------------------------------------------------------------------
    def fit(self, corpus, y=None, *, ledger: PrivacyLedger | None = None,
            vocabulary_source: "str | VocabularyStatement | None" = None,
            keep_nonprivate: bool = False, topic_word: np.ndarray | None = None,
            sensitivity_sample: SensitivitySample | None = None) -> "TopicDP":
        """Fit ``model`` on ``corpus`` (a count matrix is one user per document) and release; sets ``release_``.

        ``ledger``, shared by the releases of the same data, is checked before any fit with an entry of the same
        noise-to-sensitivity ratio, and records the release. ``vocabulary_source``: ``"private-texts"`` or
        ``"public"``, default ``corpus.vocabulary_source``. ``keep_nonprivate`` keeps f(D) on the release (never
        published). ``topic_word``: f(D) when the caller has it (determinism is then not re-checked).
        ``sensitivity_sample``: one drawn earlier for this model, domain and P at this gamma (sampled road).
        """
        self._validate_params()
        corpus = as_corpus(corpus)
        wrapped = self._wrap(corpus)
        self.model_ = wrapped.spec
        self.model_changes_ = list(wrapped.changes)
        self.release_ = self._release(corpus, ledger, vocabulary_source, keep_nonprivate, topic_word,
                                      sensitivity_sample, wrapped)
        self.topic_word_ = self.release_.topic_word
        self.report_ = self.release_.report
        self.n_features_in_ = corpus.n_words
        return self

    def transform(self, X, *, alpha=None) -> np.ndarray:
        """Document-topic proportions of ``X`` under the released topics (:meth:`PrivateRelease.transform`)."""
        from sklearn.utils.validation import check_is_fitted

        from .transform import fold_in

        check_is_fitted(self, "release_")
        # release_.transform's fold-in, with errors naming this estimator (scikit-learn's wording for a wrong width)
        release = self.release_
        return fold_in(release.topic_word, X, alpha=alpha, vocabulary=release.vocabulary, who=type(self).__name__)

    def _wrap(self, corpus) -> WrappedModel:
        """The spec f for ``model``, its changes logged; the stable form needs a public start (sampled road)."""
        reference = self._reference if self._sampled and not self._sampler.private_oracle else None
        wrapped = wrap_model(self.model, reference=reference, unit=self.unit, keep_model=bool(self.keep_model),
                             vocabulary=corpus.vocabulary, bounds=corpus.bounds)
        # logged before any fit on the private corpus, once per estimator (sample_sensitivity then fit wrap it twice)
        if wrapped.wrapped and getattr(self, "_logged_changes", None) != wrapped.summary():
            logging.getLogger("topicdp").warning(wrapped.summary())
            self._logged_changes = wrapped.summary()
        return wrapped

    def _release(self, corpus, ledger, vocabulary_source, keep_nonprivate, topic_word, sensitivity_sample, wrapped):
        model = wrapped.spec
        vocabulary = vocabulary_of(corpus, vocabulary_source)
        if sensitivity_sample is not None and not self._sampled:
            raise ValueError("sensitivity_sample applies to mechanism='gaussian' with sensitivity='sampled' only")
        if ledger is not None:
            ledger.check(self.planned_entries(model.n_topics))
        else:
            warn_on_repeated_release(corpus.X, "TopicDP.fit", None)
        if not self._sampled and not getattr(model, "probabilistic", True):
            option = "mechanism='laplace'" if self.mechanism == "laplace" else "sensitivity='global'"
            raise ValueError(f"{option} bounds topic-word matrices whose rows are probability vectors, and this model declares "
                             "probabilistic=False: use sensitivity='sampled' with a public reference P (random DP)")
        checks = []
        pre_notes = [wrapped.summary(), *wrapped.notes] if wrapped.wrapped else []
        if self._sampled:
            unstable = _stability_warning(model)  # logged before any fit
            if unstable:
                pre_notes.append(unstable)
        W, fit_seconds = self._fit_f(model, corpus, topic_word, checks, pre_notes)
        rng = check_random_state(self.random_state)
        diagnostics: dict = {"corpus": {"n_docs": corpus.n_docs, "n_users": corpus.n_users, "n_tokens": corpus.n_tokens,
                                        "fingerprint": corpus.fingerprint(), "construction": corpus.log.as_dict()}}
        laplace = self.mechanism == "laplace"
        if self._sampled:
            draft = self._sampled_draft(model, corpus, checks, diagnostics, sensitivity_sample, fit_seconds)
        else:
            # f's rows projected onto the simplex (Duchi et al. 2008), as the global bounds need, for every corpus (so
            # whether a release happens never depends on the data); how far it moved them is private (diagnostics)
            stochastic, detail = check_row_stochastic(W)
            diagnostics["row_stochastic"] = {"before_projection": detail, "on_simplex": stochastic}
            checks.append(Check(f"rows on the simplex (needed for the {'2K' if laplace else 'sqrt(2K)'} bound)", True,
                                "f's rows are projected onto the simplex before the noise, for every corpus"))
            W = project_to_simplex(W)
            draft = self._global_draft(W.shape[0])
        noisy = laplace_perturbation(W, draft["sigma"], rng) if laplace else self._gaussian_noise(W, draft, rng)
        released, empty_rows = to_simplex(noisy)
        # the report's statuses, notes and details of this release, taken out of the draft
        published = draft.pop("published")
        noise_status, after_noise = _NOISE_STATUSES[draft["guarantee"]]
        published.update({
            "noisy": noise_status,
            "topic_word": f"{after_noise}: negative entries of noisy clipped to 0, rows renormalised",
            "vocabulary": vocabulary.status,
            "report.details.model": "public: the model's stated specification",
            "report.details.postprocessing": "post-processing: counts rows of noisy with no positive entry",
            "report.details.corpus.n_words": vocabulary.status,
            "report.details.corpus.bounding": "public: the stated contribution bounds",
        })
        details = {
            **draft.pop("details"),
            "model": {**model.describe(), **({"given": wrapped.given, "changes": list(wrapped.changes)}
                                             if wrapped.wrapped else {})},
            # no count of units or documents: they differ between neighbours (the owner's diagnostics have them)
            "corpus": {"n_words": corpus.n_words,
                       "bounding": {name: getattr(corpus.log, name) for name in BOUND_PARAMETERS}},
            "postprocessing": "negative entries clipped to 0, rows renormalised to sum to 1 "
            f"({empty_rows} row(s) had no positive entry and became uniform)",
        }
        notes = [*draft.pop("notes"), *pre_notes, vocabulary.note]
        composition, totals, compose_note = self._compose(draft, details.get("secure_noise"), ledger)
        if compose_note:
            notes.append(compose_note)
        step = ReportParts(published, notes, checks, details,
                           report_fields={name: draft.pop(name) for name in STEP_FIELDS if name in draft})
        report = compose_report(step, unit=self.unit, neighbours=self._neighbours, seeded=self.random_state is not None,
                                epsilon=self.epsilon, composition=composition, composition_total=totals, **draft)
        return PrivateRelease(topic_word=released, noisy=noisy, vocabulary=corpus.vocabulary, report=report,
                              nonprivate=W if keep_nonprivate else None, diagnostics=diagnostics)

    def _fit_f(self, model, corpus, topic_word, checks, pre_notes) -> tuple[np.ndarray, float | None]:
        """f(D) (the caller's ``topic_word`` if given) and, on the sampled road, the seconds one fit took."""
        if topic_word is not None:
            W = np.asarray(topic_word, dtype=float)
            if W.shape != (model.n_topics, corpus.n_words):
                raise ValueError(f"topic_word must have shape (n_topics, n_words) = {(model.n_topics, corpus.n_words)}, "
                                 f"got {W.shape}")
            if self._sampled:
                pre_notes.append("f's determinism was not re-checked by this release (the caller gave its fit).")
            return W, None
        if not self._sampled:
            return model.fit_topic_word(corpus), None
        from joblib import Parallel, delayed, effective_n_jobs

        # the first long step, before the sampler's forecast: shown as the sampler's progress is
        with timed(f"TopicDP: two fits of the {model.name} model on the private corpus (f must be deterministic)",
                   show=self._sampler.progress):
            if effective_n_jobs(self.n_jobs) >= 2:
                (W, seconds), (again, _) = Parallel(n_jobs=2)(delayed(_timed_fit)(model, corpus) for _ in range(2))
            else:
                W, seconds = _timed_fit(model, corpus)
                again = model.fit_topic_word(corpus)
        if not np.array_equal(W, again):  # a sampled sensitivity needs two fits bit-identical
            raise ValueError(
                f"model {model.name!r} is not deterministic (two fits on the same corpus differ by "
                f"{np.linalg.norm(W - again):.3g} in Frobenius norm); fix its seed and threads"
            )
        checks.append(Check("f is deterministic (two fits bit-identical)", True, ""))
        return W, seconds

    def sample_sensitivity(self, corpus) -> SensitivitySample:
        """The sensitivity sample (TopicDP Alg. 1) :meth:`fit` would draw, without releasing anything."""
        self._validate_params()
        if not self._sampled:
            raise ValueError("sample_sensitivity applies to mechanism='gaussian' with sensitivity='sampled' only")
        corpus = as_corpus(corpus)
        model = self._wrap(corpus).spec
        _stability_warning(model)  # logged before any fit
        # the sampler times its first fit itself when it needs to
        return sample_sensitivity(model, corpus, self._sampler, unit=self.unit, n_jobs=self.n_jobs)

    def noise_scale(self, sensitivity: float) -> float:
        """sigma of the Gaussian release at ``sensitivity`` (this privatizer's calibration)."""
        return calibrate_gaussian(self.epsilon, self.delta, sensitivity, method=self._calibration)

    def _sampled_draft(self, model, corpus, checks, diagnostics, sample: SensitivitySample | None,
                       fit_seconds: float | None) -> dict:
        """The draft of the sampled sensitivity (TopicDP Alg. 1): ``sample`` as given (drawn earlier for this model,
        domain and P at this gamma), or drawn now."""
        oracle = self._sampler.private_oracle
        if sample is None:
            sample = sample_sensitivity(model, corpus, self._sampler, unit=self.unit, n_jobs=self.n_jobs,
                                        fit_seconds=fit_seconds)
        elif sample.gamma != self._sampler.gamma or (sample.distribution["kind"] == "private-resample") != oracle:
            raise ValueError(f"sensitivity_sample was drawn at gamma={sample.gamma:g} with P "
                             f"{sample.distribution['kind']!r}; this privatizer has gamma={self._sampler.gamma:g} and "
                             f"distribution={'private-oracle' if oracle else 'a public reference'}")
        if sample.sensitivity <= 0:
            raise ValueError(
                "the sampled sensitivity is 0: f gave identical output on every sampled neighbouring pair. "
                "Check that the model uses its input; a zero-noise release is not offered."
            )
        checks.append(Check("sample size meets Thm. 1 (TopicDP)", sample.sufficient,
                            f"h={sample.h}, k={sample.k} for gamma={sample.gamma:g}"))
        sigma = self.noise_scale(sample.sensitivity)
        summary = sample.summary()
        diagnostics["sensitivity_sample"] = summary
        P = dict(sample.distribution)
        notes = []
        if not sample.sufficient:
            notes.append(f"NO GUARANTEE: only {sample.h} neighbouring pairs were sampled, fewer than "
                         f"{sample.sizing} sizing requires for gamma={sample.gamma:g} (insecure_testing).")
        if sample.sizing == "exchangeable":
            notes.append(
                "Exchangeable sizing: gamma bounds the probability that a neighbouring pair drawn from P has a "
                "larger distance than the sampled sensitivity, marginal over the sensitivity sample and the "
                "neighbouring pair drawn from P; it is not a statement about this particular sample (Lambert-W "
                "sizing, TopicDP Thm. 1, gives that, at the cost of more pairs).")
        if oracle:
            # P is the private corpus: its size and fingerprint are exact private statistics (nobody stated N)
            diagnostics["private_oracle_fingerprint"] = P.pop("reference_fingerprint")
            diagnostics["private_oracle_records"] = P.pop("reference_records")
            status = ("NOT COVERED: the private-oracle P resamples the private corpus, so Delta_s and sigma are "
                      "functions of the private data released without noise")
            notes.append(PRIVATE_ORACLE_NOTE)
        else:
            status = ("public: a function of the public reference P, the stated N, the vocabulary, the model "
                      "and the sampler seed only")
        published = dict.fromkeys(_NOISE_FIELDS, status)
        published["report.sampling_distribution"] = (
            "public: how P draws (resampling the private corpus); its size and fingerprint are in the owner's "
            "diagnostics only" if oracle else
            "public: describes the public reference P (its fingerprint is of the public corpus)")
        published["report.details.sensitivity_sample"] = "public: the sampler's stated parameters (h, k, rho, seed)"
        return {
            "mechanism": "topicdp",
            "guarantee": "random-DP" if sample.sufficient else "none",
            "delta": self.delta,
            "gamma": sample.gamma,
            "sampling_distribution": P,
            "sensitivity": sample.sensitivity,
            "sensitivity_method": f"sampled: k-th ({sample.k}) smallest of h={sample.h} Frobenius distances over "
            f"neighbouring pairs drawn from P (TopicDP Alg. 1, {sample.sizing} sizing): {sample.statement}",
            "sigma": sigma,
            "calibration": self._calibration,
            "sigma_alternatives": calibrate_all(self.epsilon, self.delta, sample.sensitivity),
            "details": {"sensitivity_sample": {k: summary[k] for k in ("h", "k", "rho", "sufficient", "seed", "sizing")}},
            "notes": notes,
            "published": published,
        }

    def _global_draft(self, n_topics: int) -> dict:
        """The draft of a global bound for row-stochastic K x V matrices: L2 sqrt(2K) for the Gaussian, L1 2K for
        the Laplace mechanism (TopicDP Sec. 4.2: pure epsilon-DP, delta reported as 0)."""
        common = {"guarantee": "approx-DP", "details": {}, "published": dict.fromkeys(_NOISE_FIELDS, _GLOBAL_STATUS)}
        if self.mechanism == "laplace":
            delta_1 = simplex_l1_sensitivity(n_topics)
            return {"mechanism": "laplace", "delta": 0.0, "sensitivity": delta_1,
                    "sensitivity_method": "global L1 bound 2K for row-stochastic K x V matrices (TopicDP Sec. 4.2)",
                    "sigma": delta_1 / self.epsilon, "calibration": "laplace (scale = sensitivity / epsilon)",
                    "notes": ["Pure epsilon-DP (delta = 0); 'sigma' is the Laplace scale b."], **common}
        delta_2 = simplex_l2_sensitivity(n_topics)
        return {"mechanism": "gaussian-global", "delta": self.delta, "sensitivity": delta_2,
                "sensitivity_method": "global bound sqrt(2K) for row-stochastic K x V matrices",
                "sigma": calibrate_gaussian(self.epsilon, self.delta, delta_2, method=self._calibration),
                "calibration": self._calibration, "sigma_alternatives": calibrate_all(self.epsilon, self.delta, delta_2),
                "notes": ["The bound holds for any two datasets, so the guarantee covers add/remove neighbours too."],
                **common}

    def _gaussian_noise(self, W, draft: dict, rng) -> np.ndarray:
        """W plus Gaussian noise; with ``secure_noise`` the draft's sigma becomes the scale actually used."""
        if not self.secure_noise:
            return gaussian_perturbation(W, draft["sigma"], rng)
        from .mechanisms import secure_gaussian

        release = secure_gaussian(W, draft["sigma"], sensitivity=draft["sensitivity"], random_state=self.random_state)
        draft["details"]["secure_noise"] = {
            "sampler": "exact discrete Gaussian (Canonne, Kamath & Steinke 2020), OS randomness"
            + (" (seeded: NOT secure)" if release.seeded else ""),
            "grid": release.grid,
            "scale_units": release.scale_units,
            "noise_scale": release.noise_scale,
            "sensitivity_units": release.sensitivity_units,
            "calibrated_sigma": draft["sigma"],
            "rho": release.sensitivity_units ** 2 / (2.0 * release.scale_units ** 2),
        }
        draft["sigma"] = release.noise_scale  # the scale actually used, >= the calibrated sigma
        return release.values

    def planned_entries(self, n_topics: int, *, draft: dict | None = None, secure: dict | None = None,
                        name: str = "TopicDP release (planned)") -> list[Entry]:
        """This release's ledger entries, the one place its noise scale becomes entries: before any data is read at
        sensitivity 1 (sigma is proportional to it: the same RDP curve), or as recorded from the release's ``draft``
        (``secure``: the discrete sampler's grid units, rho = (Delta^Z)^2 / (2 s^2), Canonne, Kamath & Steinke 2020,
        Thm. 4; (s g, Delta) would understate it, as rounding to the grid makes Delta^Z > Delta / g)."""
        if draft is not None:
            scale, sensitivity = ((secure["scale_units"], secure["sensitivity_units"]) if secure is not None else
                                  (draft["sigma"], draft["sensitivity"]))
        elif self.mechanism == "laplace":
            sensitivity = simplex_l1_sensitivity(n_topics)
            scale = sensitivity / self.epsilon
        else:
            scale, sensitivity = calibrate_gaussian(self.epsilon, self.delta, 1.0, method=self.calibration), 1.0
        labels: dict[str, Any] = {"unit": self.unit, "neighbours": self._neighbours}
        if self._sampled:
            sufficient = draft is None or draft["guarantee"] == "random-DP"
            # an insufficient sample guarantees nothing: gamma = 1
            # P names the pair distribution the union bound over gammas is about (the ledger refuses to
            # combine random-DP entries of different P): the oracle, or the public reference's fingerprint
            P = PRIVATE_ORACLE if self._sampler.private_oracle else f"public reference {self._reference.fingerprint()}"
            labels.update(gamma=self._sampler.gamma if sufficient else 1.0, distribution=P)
        kind = (LaplaceEntry if self.mechanism == "laplace" else DiscreteGaussianEntry if self.secure_noise else
                GaussianEntry)
        return [kind(name, scale, sensitivity, **labels)]

    def _compose(self, draft: dict, secure: dict | None, shared: PrivacyLedger | None) -> tuple[list, list, str]:
        """Add this release to the ledger; return its entries, the totals and a note on repeated releases."""
        ledger = PrivacyLedger() if shared is None else shared  # without a shared ledger: this release alone
        entries = self.planned_entries(0, draft=draft, secure=secure, name=f"release {len(ledger) + 1}")
        ledger.record(entries)
        delta = self.delta + sum(float(e.get("delta", 0.0)) for e in ledger.entries() if e.get("kind") == "approx")
        note = ""
        if len(ledger) > 1:
            note = (f"The shared ledger holds {len(ledger)} entries; if they are of the same data, the totals under "
                    "composition_total apply" + (
                        f" and the random-DP failure probabilities add up (gamma total <= {ledger.gamma:g})."
                        if ledger.gamma > 0 else "."))
        if ledger.budget is not None:
            note = (note + " " if note else "") + (
                f"The ledger's budget is epsilon={ledger.budget[0]:g} at delta={ledger.budget[1]:g}; "
                f"{ledger.remaining():.4g} remains after this release.")
        recorded = ledger.entries()
        totals = ledger_totals(ledger, delta)
        if all(e["kind"] == "laplace" for e in recorded):
            # pure epsilon-DP: basic composition of the Laplace releases at delta = 0 (Dwork & Roth 2014, Thm. 3.16)
            totals.insert(0, total("pure (basic composition)",
                                   sum(float(e["sensitivity"]) / float(e["scale"]) for e in recorded), 0.0))
        return recorded, totals, note


def _stability_warning(model: TopicModelSpec) -> str | None:
    """The WARNING logged before any fit where ``model`` is NOT expected to be a stable function of the data."""
    expected, reason = model.stability()
    if expected is not False:
        return None
    line = (f"model {model.name!r} is NOT expected to be a stable function of the data ({reason}); its sampled "
            "sensitivity may be large and the release noise")
    logging.getLogger("topicdp").warning(line)
    return line


def _timed_fit(model, corpus) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    W = model.fit_topic_word(corpus)
    return W, time.perf_counter() - start
