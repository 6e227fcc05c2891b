"""DP stochastic variational inference for LDA (Park, Foulds, Chaudhuri & Welling 2016, *Private Topic
Modeling*, Alg. 1): online LDA (Hoffman, Blei & Bach 2010) whose minibatch sufficient statistics
``S_t = sum_{d in B_t} S_d`` (:mod:`topicdp.inference.estep`) are released with Gaussian noise at every t = 1..T::

    S~_t = max(S_t + N(0, sigma^2 I), 0)                 (Eq. 3; negatives mapped to 0 as in the paper)
    lambda_t = (1 - rho_t) lambda_{t-1} + rho_t (eta + S~_t / q),   rho_t = (tau0 + t)^-kappa

sigma = z Delta: Delta the L2 sensitivity under the document-length cap (:mod:`.sensitivity`), z calibrated by the
accountant (:mod:`.accounting`). Dividing by the *expected* batch size keeps the normaliser data-independent.
Document level only: a user's several documents are not covered together.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .._progress import Progress, progress_enabled
from .._repeats import warn_on_repeated_release
from .._names import DEFAULT_DELTA, DEFAULT_EPSILON
from .._validation import (check_count_matrix, check_privacy_parameters, check_int, check_option,
                           check_random_state, check_real, store_init)
from ..corpus import split_corpus
from ..inference import batch_e_step, dirichlet_expectation, heldout_perplexity
from ..rdp import EventEntry, PrivacyLedger
from ..private_release import PrivateRelease, VocabularyStatement, vocabulary_of
from ..report import Check, PrivacyReport, ReportParts, compose_report, total
from ..transform import FoldInMixin
from .accounting import (ACCOUNTANTS, SAMPLINGS, accountant_epsilon, calibrate_noise_multiplier, make_scheme,
                         paper_epsilon)
from .sensitivity import LENGTH_POLICIES, cap_document_lengths, sstats_sensitivity


class _OnlineLDA(FoldInMixin, BaseEstimator):
    """Online LDA by minibatch SVI: the steps of :class:`DPStochasticVI` and :class:`SVILDA` (noise in ``_perturb``)."""

    _steps_name = "SVI steps"

    def _prepare(self, X):
        """(counts, vocabulary or None, sampling scheme) of a fit, after every parameter is checked."""
        X, _, vocabulary = split_corpus(X)  # a corpus' users play no part: document level
        # fixed batches need two documents; a corpus (of private size) may hold none under Poisson sampling
        X = check_count_matrix(X, min_docs=2 if self.sampling == "fixed" else 0 if vocabulary is not None else 1)
        self.n_features_in_ = X.shape[1]
        check_int(self.n_topics, "n_topics", low=1)
        self._validate_hyper()
        batch_size, rate = self.batch_size, self.sampling_rate
        if batch_size is None and rate is None:
            batch_size = min(100, X.shape[0])
        scheme = make_scheme(self.sampling, X.shape[0], self.n_iterations, batch_size=batch_size, sampling_rate=rate)
        return X, vocabulary, scheme

    def _run(self, X: sp.csr_matrix, scheme, rng) -> sp.csr_matrix:
        """Cap the documents, then T steps from Hoffman's data-independent start; returns the capped counts."""
        X, self.n_docs_capped_ = (X, 0) if self.doc_length_cap is None else cap_document_lengths(
            X, self.doc_length_cap, policy=self.length_policy, random_state=rng)
        lam = rng.gamma(100.0, 1.0 / 100.0, size=(self.n_topics, X.shape[1]))
        steps = Progress(scheme.n_iterations, self._steps_name, bar=progress_enabled(self.progress))
        for t in range(scheme.n_iterations):
            lam = self._step(X, lam, scheme, t, rng)
            steps.update()
        steps.close()
        self.components_ = lam
        self.topic_word_ = lam / lam.sum(axis=1, keepdims=True)
        self.scheme_ = scheme
        return X

    def _validate_hyper(self) -> None:
        check_option(self.sampling, "sampling", SAMPLINGS)
        check_option(self.length_policy, "length_policy", LENGTH_POLICIES)
        check_real(self.tau0, "tau0", low=0.0, low_open=False)
        check_real(self.kappa, "kappa", low=0.5, high=1.0, high_open=False)
        check_int(self.e_step_max_iter, "e_step_max_iter", low=1)
        check_real(self.e_step_tol, "e_step_tol", low=0.0)
        k = self.n_topics
        self.alpha_ = 1.0 / k if self.alpha is None else check_real(self.alpha, "alpha", low=0.0)
        self.eta_ = 1.0 / k if self.eta is None else check_real(self.eta, "eta", low=0.0)

    def _draw_batch(self, scheme, rng) -> np.ndarray:
        """The batch the accounting assumes: exactly ``batch_size`` documents (fixed), or each with probability
        ``sampling_rate`` (Poisson)."""
        size = scheme.batch_size if scheme.kind == "fixed" else rng.binomial(scheme.n_docs, scheme.sampling_rate)
        return np.sort(rng.choice(scheme.n_docs, size=size, replace=False))

    def _step(self, X, lam, scheme, t: int, rng) -> np.ndarray:
        """One iteration of Alg. 1: E-step on a batch, (noisy) sufficient statistics, damped M-step."""
        exp_elog_beta = np.exp(dirichlet_expectation(lam))
        batch = self._draw_batch(scheme, rng)
        if batch.size:
            _, sstats = batch_e_step(X[batch], exp_elog_beta, self.alpha_,
                                     max_iter=self.e_step_max_iter, tol=self.e_step_tol)
        else:
            sstats = np.zeros_like(lam)
        sstats = self._perturb(sstats, rng)
        lam_hat = self.eta_ + sstats / scheme.sampling_rate
        rho = (self.tau0 + t + 1) ** (-self.kappa)
        return (1.0 - rho) * lam + rho * lam_hat

    def _perturb(self, sstats: np.ndarray, rng) -> np.ndarray:
        """The batch's statistics as the M-step sees them (the private class adds the noise here)."""
        return sstats

    # -- using the fitted model ----------------------------------------------------------------------
    def perplexity(self, X_heldout, *, observed_fraction: float = 0.5, random_state=None) -> float:
        """Held-out per-word perplexity (:func:`topicdp.inference.heldout_perplexity`) of documents not fitted."""
        return heldout_perplexity(self.topic_word_, X_heldout, alpha=self.alpha_,
                                  observed_fraction=observed_fraction, random_state=random_state)


def _column_labels(vocabulary, n_words: int) -> tuple:
    """A Corpus' vocabulary, else the column indices as strings (fit on a matrix)."""
    return tuple(str(j) for j in range(n_words)) if vocabulary is None else vocabulary


class DPStochasticVI(_OnlineLDA):
    """Differentially private online LDA by perturbed sufficient statistics (Park et al. 2016), document level.

    It has no plan (no count, no forecast, no refusal): the pipeline runs it for the planned
    :class:`topicdp.DPSVI`. Without noise the same algorithm is :class:`SVILDA`.

    Parameters
    ----------
    epsilon, delta : float, default=3.0, 1e-6
        Total budget over all T iterations; delta should be well below 1/n_docs (checked in the report).
    batch_size, sampling_rate : int, float in (0, 1], optional
        S, the expected (Poisson) or exact (fixed) batch size (default min(100, n_docs)), or q = S / D: give q
        under add/remove neighbours, where D is private.
    tau0, kappa : float, default=1.0, 0.6
        Step sizes rho_t = (tau0 + t)^-kappa, kappa in (0.5, 1] (Hoffman et al. 2010).
    doc_length_cap, length_policy : int, {"subsample", "scale"}, default=100, "subsample"
        N, the tokens a document keeps (the sensitivity is a function of it), and how (:mod:`.sensitivity`).
    accountant : {"rdp", "pld", "paper"}, default="rdp"
        Calibration of z: RDP, PLD (Poisson only) or the paper's Eqs. 3, 5, 6 (delta_iter ``paper_delta_iter``,
        default delta); the report gives the RDP and the paper's epsilon of the z used.
    alpha, eta : float, optional
        Symmetric Dirichlet priors on theta and beta; default 1/K each.
    random_state : None, int or Generator
        Seeds batches, capping and noise; a seeded run is marked ``seeded``.

    Attributes: ``components_`` (lambda), ``topic_word_`` (E[beta]), ``noise_multiplier_`` z, ``sigma_`` (z Delta,
    on the batch sum), ``sensitivity_`` Delta, ``n_docs_capped_`` (diagnostics only), ``report_``, ``release_``.
    """

    _steps_name = "DP-SVI steps"

    def __init__(self, n_topics: int, *, epsilon: float = DEFAULT_EPSILON, delta: float = DEFAULT_DELTA,
                 batch_size: int | None = None, sampling_rate: float | None = None, n_iterations: int = 500,
                 tau0: float = 1.0, kappa: float = 0.6, doc_length_cap: int = 100,
                 length_policy: str = "subsample", accountant: str = "rdp", sampling: str = "poisson",
                 alpha: float | None = None, eta: float | None = None, paper_delta_iter: float | None = None,
                 e_step_max_iter: int = 100, e_step_tol: float = 1e-3, progress: bool | None = None,
                 random_state=None):
        store_init(self, locals())

    def fit(self, X, y=None, *, vocabulary_source: "str | VocabularyStatement | None" = None,
            ledger: PrivacyLedger | None = None) -> "DPStochasticVI":
        """Run T iterations of private SVI on a :class:`topicdp.Corpus` or document-term counts ``X``.

        ``vocabulary_source``: as for :meth:`topicdp.TopicDP.fit`. ``ledger``: the run is one
        :class:`topicdp.rdp.EventEntry` (T subsampled Gaussian steps), checked before any document is capped and
        recorded after the run.
        """
        statement = vocabulary_of(X, vocabulary_source)  # of the Corpus as given, before X becomes its counts
        X, vocabulary, scheme = self._prepare(X)
        rng = check_random_state(self.random_state)
        # the calibration: public parameters only; uses no randomness
        self.sensitivity_ = sstats_sensitivity(self.doc_length_cap, scheme.neighbours)
        self.noise_multiplier_ = calibrate_noise_multiplier(
            scheme, self.epsilon, self.delta, self.accountant, delta_iter=self.paper_delta_iter
        )
        self.sigma_ = self.noise_multiplier_ * self.sensitivity_
        entries = []
        if ledger is not None:
            entries = [EventEntry("dp-svi", scheme.event(self.noise_multiplier_), unit="document",
                                  neighbours=scheme.neighbours)]
            ledger.check(entries)
        warn_on_repeated_release(X, "DPStochasticVI.fit", ledger)
        X = self._run(X, scheme, rng)
        if vocabulary is None:
            statement = VocabularyStatement("public: column indices (fit on a matrix)", "")
        self.report_, diagnostics = dpsvi_report(self, scheme, X.shape[0], statement)
        self.release_ = PrivateRelease(
            topic_word=self.topic_word_, noisy=None, report=self.report_, diagnostics=diagnostics,
            vocabulary=_column_labels(vocabulary, self.topic_word_.shape[1]),
        )
        if ledger is not None:
            ledger.record(entries)
        return self

    def _validate_hyper(self) -> None:
        super()._validate_hyper()
        check_option(self.accountant, "accountant", ACCOUNTANTS)
        check_privacy_parameters(self, nonprivate="topicdp.SVILDA")
        if self.doc_length_cap is None:
            raise ValueError("doc_length_cap must be a positive integer: the sensitivity is a function of it "
                             "(topicdp.SVILDA fits without a cap)")
        if self.accountant == "pld" and self.sampling != "poisson":
            raise ValueError("accountant='pld' needs sampling='poisson' (dp-accounting has no PLD for fixed batches)")

    def _perturb(self, sstats: np.ndarray, rng) -> np.ndarray:
        """Eq. 3: Gaussian noise on the batch's statistics, negatives mapped to 0 as in the paper."""
        return np.maximum(sstats + rng.normal(0.0, self.sigma_, size=sstats.shape), 0.0)


class SVILDA(_OnlineLDA):
    """Non-private online LDA (Hoffman, Blei & Bach 2010): :class:`DPStochasticVI`'s algorithm without noise.

    The parameters are :class:`DPStochasticVI`'s, except: ``progress`` defaults to False, ``doc_length_cap`` to
    None (no cap) and ``sampling`` to ``"fixed"``. ``vocabulary_`` holds the columns' words (their indices as
    strings when fit on a matrix).
    """

    def __init__(self, n_topics: int, *, batch_size: int | None = None, sampling_rate: float | None = None,
                 n_iterations: int = 500, tau0: float = 1.0, kappa: float = 0.6,
                 doc_length_cap: int | None = None, length_policy: str = "subsample", sampling: str = "fixed",
                 alpha: float | None = None, eta: float | None = None, e_step_max_iter: int = 100,
                 e_step_tol: float = 1e-3, progress: bool | None = False, random_state=None):
        store_init(self, locals())

    def fit(self, X, y=None) -> "SVILDA":
        """Run T iterations of SVI on a :class:`topicdp.Corpus` or document-term counts ``X``."""
        X, vocabulary, scheme = self._prepare(X)
        self._run(X, scheme, check_random_state(self.random_state))
        self.vocabulary_ = _column_labels(vocabulary, self.n_features_in_)
        return self


PAPER_CAVEAT = (
    "The 'paper' total follows Park et al. 2016 Eqs. 3, 5, 6 as written; it is not a valid bound: it "
    "treats the subsampled (eps', delta')-DP step as rho-zCDP, drops the per-step delta', and uses the "
    "classical Gaussian calibration outside its proven range eps_iter < 1. The stated guarantee is the "
    "dp-accounting total."
)


def _alternatives(est, scheme) -> dict:
    """sigma that each calibration would have chosen for the same target (epsilon, delta)."""
    out = {}
    methods = ("rdp", "pld", "paper") if scheme.kind == "poisson" else ("rdp", "paper")
    for method in methods:
        if method == "pld" and est.accountant != "pld":
            continue  # PLD calibration costs seconds; computed only when it is the chosen accountant
        z = est.noise_multiplier_ if method == est.accountant else calibrate_noise_multiplier(
            scheme, est.epsilon, est.delta, method, delta_iter=est.paper_delta_iter)
        out[method] = z * est.sensitivity_
    return out


def _totals(est, scheme) -> list[dict]:
    z = est.noise_multiplier_
    totals = [total("rdp", accountant_epsilon(scheme, z, est.delta, "rdp"), est.delta)]
    if est.accountant == "pld":
        totals.append(total("pld", accountant_epsilon(scheme, z, est.delta, "pld"), est.delta))
    paper = paper_epsilon(z, scheme.sampling_rate, scheme.n_iterations, est.delta, est.paper_delta_iter)
    details = {k: v for k, v in paper.items() if k not in ("epsilon", "delta")}
    totals.append(total("paper", paper["epsilon"], paper.get("delta", est.delta), valid=False, **details))
    return totals


def _published(est, scheme, vocab_status: str) -> dict:
    """Status of every published field: the noise follows from stated parameters, except q when it was
    derived from the private corpus size under add/remove neighbours."""
    rate_derived = scheme.kind == "poisson" and est.sampling_rate is None
    stated = ("NOT COVERED: the sampling rate q = batch_size / n_docs depends on the private corpus size under "
              "add/remove neighbours; pass sampling_rate to make it public" if rate_derived else
              "public: a function of the stated (epsilon, delta, q, T, doc_length_cap) only" +
              ("" if scheme.kind == "poisson" else " and the stated N (replace-one neighbours)"))
    return {
        "topic_word": "post-processing: E[beta] from lambda, built from the noisy sufficient statistics only",
        "vocabulary": vocab_status,
        **{f"report.{name}": stated for name in ("sensitivity", "sigma", "sigma_alternatives", "composition",
                                                  "composition_total")},
        **{f"report.details.{name}": stated for name in ("doc_length_cap", "length_policy", "target_epsilon",
                                                          "noise_multiplier")},
        **({"report.details.n_docs": "public (stated): N is the same for all replace-one neighbours"}
           if scheme.kind == "fixed" else {}),
    }


def dpsvi_report(est, scheme, n_docs: int, vocabulary: VocabularyStatement) -> tuple[PrivacyReport, dict]:
    """The report, and the owner's diagnostics (what capping cut; N and the delta check under add/remove)."""
    totals = _totals(est, scheme)
    certified_by = "pld" if est.accountant == "pld" else "rdp"
    certified = next(t["epsilon"] for t in totals if t["accounting"] == certified_by)
    paper = next(t for t in totals if t["accounting"] == "paper")
    inverse = 1.0 / n_docs if n_docs else float("inf")  # no document (add/remove: a private diagnostic)
    n_check = Check("delta < 1/n_docs", est.delta < inverse, f"delta={est.delta:.3g}, 1/n_docs={inverse:.3g}")
    checks = [
        Check(f"certified epsilon <= target ({certified_by})", certified <= est.epsilon * (1 + 1e-9),
              f"{certified:.6g} vs target {est.epsilon:.6g}"),
    ]
    # the paper's recipe is shown for comparison only (its total is marked not valid), so its range is a note,
    # not a check of this release
    eps_iter = paper["details"]["epsilon_iter"]
    recipe_note = (f"For comparison, the paper's recipe gives eps_iter = {eps_iter:.4g} per iteration; its Eq. 3 is "
                   "proven for eps_iter < 1 " + ("only, so its total is not a bound here." if eps_iter >= 1 else "(met)."))
    diagnostics = {"n_docs_capped": est.n_docs_capped_,
                   "note": "documents longer than doc_length_cap, counted on the private data (not privatised)"}
    details = {"doc_length_cap": est.doc_length_cap, "length_policy": est.length_policy,
               "target_epsilon": est.epsilon, "noise_multiplier": est.noise_multiplier_}
    if scheme.kind == "fixed":  # replace-one: N is public
        checks.insert(1, n_check)
        details["n_docs"] = n_docs
    else:  # add/remove: N is private, and so is whether delta < 1/N
        diagnostics.update({"n_docs": n_docs, "delta_check": {"passed": n_check.passed, "detail": n_check.detail}})
    step = ReportParts(_published(est, scheme, vocabulary.status),
                       [*([vocabulary.note] if vocabulary.note else []), *_notes(est, scheme), recipe_note], checks,
                       details,
                       report_fields=dict(
        sensitivity=float(est.sensitivity_),
        sensitivity_method=(
            f"global bound on the minibatch sum of expected sufficient statistics with document-length cap "
            f"N={est.doc_length_cap}: {'N' if scheme.neighbours == 'add-remove' else 'sqrt(2) N'} "
            "(Park et al. Eq. 4, corrected for replace-one)"
        ),
        sigma=float(est.sigma_),
        calibration=est.accountant,
        sigma_alternatives=_alternatives(est, scheme)))
    report = compose_report(
        step,
        mechanism="dpsvi",
        guarantee="approx-DP",
        unit="document",
        neighbours=scheme.neighbours,
        epsilon=float(certified),
        delta=float(est.delta),
        seeded=est.random_state is not None,
        composition=[{
            "name": "sampled-gaussian", "count": scheme.n_iterations, "sampling": scheme.kind,
            "sampling_rate": scheme.sampling_rate, "batch_size": scheme.batch_size,
            "noise_multiplier": est.noise_multiplier_, "sigma": est.sigma_, "sensitivity": est.sensitivity_,
        }],
        composition_total=totals,
    )
    return report, diagnostics


def _notes(est, scheme) -> list[str]:
    relation = ("Poisson sampling with add/remove-one-document neighbours" if scheme.kind == "poisson"
                else "fixed-size batches without replacement with replace-one-document neighbours")
    return [
        f"Every one of the {scheme.n_iterations} iterations releases noisy sufficient statistics; the "
        f"accountant composes all of them for {relation}.",
        f"Documents longer than N={est.doc_length_cap} tokens were cut to N ({est.length_policy}); how many were "
        "cut is counted on the private data and kept in the release's diagnostics, not in the report.",
        PAPER_CAVEAT,
    ]
