"""``SpectralDP``: the spectral LDA with noise at one of the four configurations, and its PrivacyReport."""

from __future__ import annotations

import math
import time

import numpy as np

from .._validation import check_delta, check_epsilon, check_int, check_option, check_random_state
from ..release import PrivateRelease, vocabulary_status
from ..report import Check, PrivacyReport, build_report, total
from .accounting import ACCOUNTING_METHODS, DEFAULT_SPLITS, Budget
from .configurations import CONFIGURATIONS, RUNNERS, Context, PreconditionError
from .estimator import check_model_params
from .moments import prepare_corpus
from .recovery import SIMPLEX_METHODS

__all__ = ["SpectralDP", "PreconditionError", "group_privacy", "document_level_target"]


def group_privacy(epsilon: float, delta: float, m: int) -> tuple[float, float]:
    """(eps, delta)-DP for one document => ``(m eps, delta (e^{m eps} - 1)/(e^eps - 1))`` for m documents.

    Group privacy (Dwork & Roth 2014, Thm. 2.2, and its standard (eps, delta) form): chaining the guarantee
    through the m - 1 intermediate corpora between D and D' (which differ in m documents),
    ``P[M(D) in S] <= e^{m eps} P[M(D') in S] + delta sum_{j<m} e^{j eps}``.
    """
    if m == 1:
        return epsilon, delta
    return m * epsilon, min(1.0, delta * math.exp(_log_group_factor(epsilon, m)))


def _log_group_factor(epsilon: float, m: int) -> float:
    """``log sum_{j<m} e^{j eps}``, overflow-safe."""
    return float(np.logaddexp.reduce(epsilon * np.arange(m)))


def document_level_target(epsilon: float, delta: float, m: int) -> tuple[float, float]:
    """The document-level (eps, delta) whose group-privacy image for m documents is (epsilon, delta)."""
    eps_d = epsilon / m
    delta_d = delta * math.exp(-_log_group_factor(eps_d, m))
    if not delta_d > 0:
        raise ValueError(f"delta={delta:g} is too small for max_docs_per_user={m} at epsilon={epsilon:g} "
                         "(the document-level delta underflows); raise delta or lower epsilon")
    return eps_d, delta_d


class SpectralDP:
    """Differentially private spectral LDA (``000_*``, Sec. 5-6) at configuration 1, 2, 3 or 4.

    Parameters
    ----------
    n_topics : int
        k >= 2, smaller than the vocabulary.
    alpha0 : float
        Public sum of the Dirichlet parameter, > 0.
    configuration : {1, 2, 3, 4}
        Where the noise goes (see :mod:`.configurations`); :func:`recommend_configuration` picks one.
    epsilon, delta : float
        Total privacy budget, epsilon > 0, 0 < delta < 1 (for the unit of privacy below).
    random_state : None, int or Generator
        Seeds the noise (the report then says ``seeded``: do not publish such a release) and the solvers.
    split : dict, optional
        Epsilon fractions per release (keys as in ``accounting.DEFAULT_SPLITS[configuration]``).
    accounting : {"rdp", "simple"}, default "rdp"
        How the per-release noise is calibrated (see :mod:`.accounting`); the report gives both totals.
    max_docs_per_user : int, optional
        If given, the unit of privacy is the user, owning at most this many documents: the budget is
        turned into a document-level one by group privacy (:func:`group_privacy`).
    strict : bool, default True
        Raise when a Table-3 precondition fails on the released quantities (privacy-critical
        preconditions always raise).
    theta_seed : int, default 0
        Seed of the public direction of Jennrich's algorithm (configurations 3-4); data independent.

    Attributes
    ----------
    topic_word_, alpha_ : the private topics (k x d, rows on the simplex) and Dirichlet parameters
    report_ : PrivacyReport
    release_ : PrivateRelease
        The published topics (``topic_word``), ``extra["alpha"]``, the vocabulary (column indices when fit on
        a matrix) and the report; its ``diagnostics`` hold the run time (owner's eyes only).
    n_documents_, n_short_documents_ : documents used / left out (fewer than 3 tokens)
    """

    def __init__(self, n_topics: int, alpha0: float, configuration: int, epsilon: float, delta: float,
                 random_state=None, *, split: dict | None = None, accounting: str = "rdp",
                 max_docs_per_user: int | None = None, strict: bool = True, simplex: str = "project",
                 theta_seed: int = 0, n_restarts: int = 5):
        self.n_topics = n_topics
        self.alpha0 = alpha0
        self.configuration = configuration
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.split = split
        self.accounting = accounting
        self.max_docs_per_user = max_docs_per_user
        self.strict = strict
        self.simplex = simplex
        self.theta_seed = theta_seed
        self.n_restarts = n_restarts

    # ------------------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, users=None, vocabulary_source: str = "private-texts") -> "SpectralDP":
        """Fit on a :class:`topicdp.Corpus` or doc-term counts X; sets ``release_`` (a PrivateRelease).

        ``users`` (optional, one id per row; taken from a Corpus when ``max_docs_per_user`` is set) verifies
        ``max_docs_per_user``. ``vocabulary_source`` states where a Corpus' vocabulary came from
        (``"private-texts"`` or ``"public"``, see :meth:`topicdp.TopicDP.privatize`).
        """
        vocabulary = None
        if hasattr(X, "vocabulary") and hasattr(X, "doc_users"):  # a topicdp Corpus
            if users is None and self.max_docs_per_user is not None:
                users = X.doc_users
            vocabulary, X = X.vocabulary, X.X
        k, a0 = check_model_params(self.n_topics, self.alpha0)
        cfg = check_int(self.configuration, "configuration", low=1, high=4)
        eps = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        check_option(self.accounting, "accounting", ACCOUNTING_METHODS)
        check_option(self.simplex, "simplex", SIMPLEX_METHODS)
        m = 1 if self.max_docs_per_user is None else check_int(self.max_docs_per_user, "max_docs_per_user", low=1)
        if users is not None:
            _, counts = np.unique(np.asarray(users), return_counts=True)
            if counts.max() > m:
                raise ValueError(f"a user owns {counts.max()} documents, more than max_docs_per_user={m}")
        rng = check_random_state(self.random_state)
        t0 = time.perf_counter()
        corpus = prepare_corpus(X)
        check_model_params(k, a0, corpus.n_words)
        eps_doc, delta_doc = document_level_target(eps, delta, m)
        spec = CONFIGURATIONS[cfg]
        split = dict(DEFAULT_SPLITS[cfg] if self.split is None else self.split)
        budget = Budget(eps_doc, delta_doc, split, spec["gaussian"], spec["laplace"], self.accounting)
        theta = np.random.default_rng(self.theta_seed).standard_normal(k)
        ctx = Context(corpus=corpus, alpha0=a0, k=k, budget=budget, rng=rng, theta=theta / np.linalg.norm(theta),
                      strict=self.strict, simplex=self.simplex, n_restarts=self.n_restarts)
        topics, alpha, n_bad = RUNNERS[cfg](ctx)
        self.topic_word_ = topics
        self.alpha_ = alpha
        self.n_documents_ = corpus.n_docs
        self.n_short_documents_ = corpus.n_short
        self.n_degenerate_topics_ = n_bad
        self.report_ = self._report(cfg, ctx, budget, m, eps, delta, vocabulary, vocabulary_source)
        self.release_ = PrivateRelease(
            topic_word=topics, noisy=None, report=self.report_, extra={"alpha": alpha},
            vocabulary=tuple(str(j) for j in range(topics.shape[1])) if vocabulary is None else vocabulary,
            diagnostics={"seconds": time.perf_counter() - t0},
        )
        return self

    # ------------------------------------------------------------------------------------------------
    def _report(self, cfg: int, ctx: Context, budget: Budget, m: int, eps: float, delta: float,
                vocabulary, vocabulary_source: str) -> PrivacyReport:
        totals_doc = budget.totals()
        eps_doc_best = totals_doc["best"]
        eps_user, delta_user = group_privacy(eps_doc_best, budget.delta, m)
        unit = "document" if m == 1 else "user"
        notes = [
            "Neighbouring corpora differ by replacing one document; N (documents with >= 3 tokens) and the "
            "number of documents with fewer than 3 tokens (left out, reported below) are public.",
            "Sensitivities are proven bounds (topicdp.spectral.sensitivity): App. H.1 and H.2 (corrected to "
            "count all three placements B1-B3) globally; the whitened tensor's and the decomposition's "
            "given the released M2, with the Procedure-1 bounds for configurations 3-4.",
            "Floating-point effects of sampling (Mironov 2012) are not accounted for.",
        ]
        if m > 1:
            notes.append(
                f"User level: each user owns at most {m} documents. Group privacy (Dwork & Roth 2014, Thm. 2.2 "
                f"in (eps, delta) form): a document-level (eps, delta) guarantee gives (m eps, delta "
                f"(e^(m eps) - 1)/(e^eps - 1)) for the up-to-m documents of one user; the noise was calibrated "
                f"to the document-level target ({budget.epsilon:.4g}, {budget.delta:.3g}) that maps to the "
                f"requested ({eps:.4g}, {delta:.3g}).")
        ctx.checks.insert(0, Check("documents with >= 3 tokens", True,
                                   f"{ctx.corpus.n_docs} used, {ctx.corpus.n_short} left out"))
        details = {
            "configuration": cfg,
            "edges": list(CONFIGURATIONS[cfg]["edges"]),
            "budget_split": budget.split,
            "accounting": budget.accounting,
            "n_documents": ctx.corpus.n_docs,
            "n_short_documents": ctx.corpus.n_short,
            "n_words": ctx.corpus.n_words,
            "n_topics": ctx.k,
            "alpha0": ctx.alpha0,
            "document_level": {"epsilon_target": budget.epsilon, "delta": budget.delta, "totals": totals_doc},
            "max_docs_per_user": m,
            **ctx.details,
        }
        if "Delta_T" in ctx.details:
            sens, sens_method = ctx.details.get("Delta_decomposition", ctx.details["Delta_T"]), \
                "local bound (Procedure 1)" if cfg >= 3 else "global bound given the released M2"
        else:
            sens, sens_method = ctx.details["Delta3"], "global bound (App. H.1-H.2, corrected)"
        if vocabulary is None:
            vocab_status = "public: column indices (fit on a matrix)"
        else:
            vocab_status, vocab_note = vocabulary_status(vocabulary_source, allow_dp=False)
            notes.append(vocab_note)
        return build_report(
            mechanism=f"spectral-config-{cfg}",
            guarantee="approx-DP",
            unit=unit,
            neighbours="replace-one",
            epsilon=float(eps_user),
            delta=float(delta_user),
            sensitivity=float(sens),
            sensitivity_method=sens_method,
            calibration=budget.accounting,
            composition=budget.releases,
            composition_total=[total(method, *group_privacy(e, budget.delta, m), document_level_epsilon=e,
                                     document_level_delta=budget.delta) for method, e in totals_doc.items()],
            checks=ctx.checks,
            seeded=self.random_state is not None,
            notes=notes,
            details=details,
            published=_published(details, vocab_status),
        )


_STATED = "public: a function of the stated parameters (k, alpha0, epsilon, delta, split) and of N (or U)"
#: status of each published detail of a spectral report; a key not listed here is refused by save()
_DETAIL_STATUSES = {
    **{key: _STATED for key in ("configuration", "edges", "budget_split", "accounting", "n_words", "n_topics",
                                "alpha0", "max_docs_per_user", "Delta2", "Delta3", "m2_noise_sigma",
                                "m2_noise_spectral_norm_approx", "m2_combined_sigma")},
    "n_documents": "public (stated): N, the number of documents, is the same for all replace-one neighbours",
    "n_users": "public (stated): U, the number of users, is the same for all replace-one-user neighbours",
    "whitening": "public: which whitening was used",
    "public_m2_eigenvalues": "public: computed from the caller's public reference corpus",
    "n_short_documents": "public (stated): documents with fewer than 3 tokens are left out and counted, as stated",
    "procedure1": "DP: Procedure-1 bounds released with Laplace noise",
    **{key: "post-processing: a function of released quantities and stated parameters"
       for key in ("document_level", "released_m2_eigenvalues", "released_m2_next_eigenvalue", "Delta_T",
                   "Delta_decomposition", "Delta_output")},
}


def _published(details: dict, vocab_status: str) -> dict:
    derived = ("post-processing: a function of the stated N and parameters and (configurations 2-4) of "
               "released quantities")
    return {
        "topic_word": "post-processing: of the noisy releases at the configuration's edges",
        "extra.alpha": "post-processing: of the noisy releases at the configuration's edges",
        "vocabulary": vocab_status,
        "report.checks": "post-processing: outcomes on released quantities and the stated N",
        **{f"report.{name}": derived for name in ("sensitivity", "sigma", "sigma_alternatives", "composition",
                                                  "composition_total")},
        **{f"report.details.{key}": _DETAIL_STATUSES[key] for key in details if key in _DETAIL_STATUSES},
    }
