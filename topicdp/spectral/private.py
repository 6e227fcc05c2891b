"""``DPSpectralMoments``: the spectral LDA with noise at one of the four configurations, and its PrivacyReport."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from .._progress import timed
from .._repeats import warn_on_repeated_release
from .._validation import check_privacy_parameters, check_int, check_option, check_random_state, store_init
from ..corpus import split_corpus
from ..rdp import PrivacyLedger
from ..rdp.ledger import labelled
from ..private_release import PrivateRelease, VocabularyStatement, vocabulary_of
from ..transform import FoldInMixin
from ..report import Check, PrivacyReport, ReportParts, compose_report, total
from .accounting import ACCOUNTING_METHODS, DEFAULT_SPLITS, SpectralBudget
from .configurations import RUNNERS, Context, PreconditionError, releases
from .estimator import check_model_params
from .moments import M2Operator, count_units, prepare_corpus
from .recovery import SIMPLEX_METHODS
from .whitening import Whitening, whiten

__all__ = ["DPSpectralMoments", "PreconditionError", "UNITS"]

#: the privacy units DPSpectralMoments protects (see :mod:`.sensitivity` for the neighbour relations)
from .._names import DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_UNIT, UNITS, Unit  # noqa: E402


#: what the zero units cost; the report's notes carry it
BIAS_NOTE = ("Units without a usable document (fewer than 3 in-vocabulary tokens in every document) count in n with "
             "zero statistics: the moments shrink by the share s of usable units (first-order terms by s, cross "
             "terms by about s^2 and s^3), a bias that is not corrected; the recovered alpha sums to about "
             "s alpha0.")


def public_whitening(reference, alpha0: float, n_topics: int, n_words: int, vocabulary=None,
                     rng: np.random.Generator | None = None) -> Whitening:
    """Whitening ``W``, ``W^dagger`` from the (document-level, non-private) M2 of a *public* reference corpus: a
    :class:`topicdp.Corpus` (on ``vocabulary`` if given, in its order) or a count matrix of ``n_words`` columns."""
    reference, _, words = split_corpus(reference)
    if words is not None and vocabulary is not None and words != tuple(vocabulary):
        raise ValueError("public_whitening: the reference corpus must have the same vocabulary, in the same "
                         "order, as the private one")
    ref = prepare_corpus(reference, name="public_whitening")
    if ref.n_words != n_words:
        raise ValueError(f"public_whitening must have the private corpus' {n_words} columns (words), got {ref.n_words}")
    rng = np.random.default_rng(0) if rng is None else rng
    return whiten(M2Operator(ref, alpha0).matmat, n_words, n_topics, rng=rng, what="the public reference M2")


class DPSpectralMoments(FoldInMixin, BaseEstimator):
    """Differentially private spectral LDA (DeCarolis et al. 2020, Sec. 5-6) at configuration 1, 2, 3 or 4.

    It has no plan (no count, no forecast, no refusal): it is what the pipeline runs for the planned
    :class:`topicdp.DPSpectralMoments`, and releases whatever it fits.

    Parameters
    ----------
    n_topics, alpha0 : int >= 2 (smaller than the vocabulary), float > 0 (the public Dirichlet sum); default 10, 1.0
    configuration : {1, 2, 3, 4}, default=1
        Where the noise goes (:mod:`.configurations`); :func:`recommend_configuration` picks one, 1 unless simple
        accounting is asked for. 1 has no data-dependent precondition.
    epsilon, delta : float, default=3.0, 1e-6 (``topicdp._names.DEFAULT_EPSILON``, ``DEFAULT_DELTA``)
        Total budget (epsilon > 0, delta in (0, 1)) for the privacy unit; without noise the method is
        :class:`~topicdp.spectral.SpectralLDA`.
    random_state : None, int or Generator
        Seeds the noise (the report then says ``seeded``: do not publish such a release) and the solvers.
    split : dict, optional
        Epsilon fractions per release (keys as in ``accounting.DEFAULT_SPLITS[configuration]``).
    accounting : {"auto", "exact", "rdp", "simple"}, default "auto"
        The calibration (:mod:`.accounting`); the report gives every valid total.
    unit : {"user", "document"}, default="user" (``topicdp._names.DEFAULT_UNIT``)
        Neighbours replace one document, or all documents of one user, by any others (:mod:`.sensitivity`; N or U
        public). A count matrix at user level needs ``users=`` in :meth:`fit`.
    n_units : int >= 3, optional
        The public number n of units counted *before* any filtering (a :class:`topicdp.Corpus`' dropped documents
        and users, as its ``log`` counts, included); a corpus with another number is refused. Units without a
        usable document stay in n as zero units (:mod:`.moments`, :data:`BIAS_NOTE`). ``None``: the corpus' own
        count, which the report says was *taken* as public (the caller vouches that it is).
    public_whitening : topicdp.Corpus or count matrix, optional
        A *public* reference corpus on the same vocabulary whose M2 gives W (:func:`public_whitening`): no M2 is
        released. Nothing in it is protected.
    strict : bool, default True
        Raise when a Table-3 precondition fails on the released quantities (privacy-critical ones always raise).
    theta_seed : int, default 0
        Seed of the public direction of Jennrich's algorithm (configurations 3-4); data independent.
    progress : bool or None, default=None
        Show the spectral steps' start and duration on stderr unless False or ``TOPICDP_PROGRESS=0``
        (:mod:`topicdp._progress`); the ``topicdp`` logger gets them at INFO either way.

    Attributes
    ----------
    topic_word_, alpha_ : the private topics (k x d, rows on the simplex) and Dirichlet parameters
    report_ : PrivacyReport
    release_ : PrivateRelease
        The topics, ``extra["alpha"]``, the vocabulary (column indices when fit on a matrix) and the report; its
        ``diagnostics`` (owner's eyes only) hold the run time and the private counts also set as
        ``n_documents_``, ``n_short_documents_`` (fewer than 3 tokens) and ``n_used_units_`` (with a usable document).
    n_units_ : n, the public number of units (N, or U at user level), stated or taken as public

    Examples
    --------
    >>> from topicdp.datasets import synthetic_lda
    >>> X = synthetic_lda(2000, 30, 3, alpha0=1.0, random_state=0).X
    >>> model = DPSpectralMoments(n_topics=3, alpha0=1.0, configuration=1, epsilon=2.0, delta=1e-6, unit="document",
    ...                    random_state=0)
    >>> release = model.fit(X).release_
    >>> release.topic_word.shape, release.report.guarantee, release.report.unit
    ((3, 30), 'approx-DP', 'document')
    >>> model.transform(X[:4]).shape  # document-topic proportions under the released topics
    (4, 3)
    """

    def __init__(self, n_topics: int = 10, alpha0: float = 1.0, configuration: int = 1, *,
                 epsilon: float = DEFAULT_EPSILON, delta: float = DEFAULT_DELTA, random_state=None,
                 split: dict | None = None, accounting: str = "auto", unit: Unit | str = DEFAULT_UNIT,
                 public_whitening=None, strict: bool = True, simplex: str = "project", theta_seed: int = 0,
                 n_restarts: int = 5, n_units: int | None = None, progress: bool | None = None):
        store_init(self, locals())

    def fit(self, X, y=None, *, users=None, vocabulary_source: "str | VocabularyStatement | None" = None,
            ledger: PrivacyLedger | None = None) -> "DPSpectralMoments":
        """Fit on a :class:`topicdp.Corpus` or doc-term counts X; sets ``release_`` (a PrivateRelease).

        ``users`` (one id per row of a matrix X) is needed at user level; a Corpus brings its ``doc_users``.
        ``vocabulary_source``: where a Corpus' vocabulary came from (see :meth:`topicdp.TopicDP.fit`). ``ledger``:
        the planned releases are checked against its budget before the data is read
        (:class:`topicdp.rdp.BudgetExceededError`), and the releases made are recorded in it, labelled with the unit
        and the replace-one relation, even when the fit stops after some (the error is a function of them).
        """
        given = X
        statement = vocabulary_of(X, vocabulary_source)  # of the Corpus as given, before X becomes its counts
        X, doc_users, vocabulary = split_corpus(X)
        k, a0 = check_model_params(self.n_topics, self.alpha0)
        cfg, edges, budget = self._releases()
        check_option(self.simplex, "simplex", SIMPLEX_METHODS)
        unit = check_option(self.unit, "unit", UNITS)
        stated = None if self.n_units is None else check_int(self.n_units, "n_units", low=3)
        if ledger is not None:
            ledger.check(self.planned_entries())
        rng = check_random_state(self.random_state)
        t0 = time.perf_counter()
        if doc_users is not None:  # each document's owner: a Corpus' doc_users or the caller's users (user level)
            if users is not None:
                raise ValueError("users must not be given with a topicdp.Corpus (its doc_users are used)")
            users = doc_users
        if unit == "user" and users is None:
            raise ValueError("unit='user' (the default) needs the owner of each document: pass a topicdp.Corpus or "
                             "users=, or set unit='document' to protect single documents")
        users = users if unit == "user" else None
        n = _public_count(stated, given, X, users, unit)
        corpus = prepare_corpus(X, users=users, n_units=n)
        warn_on_repeated_release(corpus.X, "DPSpectralMoments.fit", ledger)
        check_model_params(k, a0, corpus.n_words)
        self.n_features_in_ = corpus.n_words
        public = (None if self.public_whitening is None else
                  public_whitening(self.public_whitening, a0, k, corpus.n_words, vocabulary))
        theta = np.random.default_rng(self.theta_seed).standard_normal(k)
        ctx = Context(corpus=corpus, alpha0=a0, k=k, budget=budget, rng=rng, theta=theta / np.linalg.norm(theta),
                      strict=self.strict, public=public, simplex=self.simplex, n_restarts=self.n_restarts)
        try:
            with timed(f"spectral configuration {cfg}: moments, whitening and tensor decomposition",
                       show=self.progress):
                topics, alpha, n_bad = RUNNERS[cfg](ctx)
        finally:
            if ledger is not None:
                ledger.record(labelled(budget.ledger.records, unit=unit, neighbours="replace-one"))
        self.topic_word_ = topics
        self.alpha_ = alpha
        self.n_documents_ = corpus.n_docs
        self.n_short_documents_ = corpus.n_short
        self.n_used_units_ = corpus.n_used
        self.n_units_ = corpus.n_units
        self.n_degenerate_topics_ = n_bad
        self.report_ = self._report(cfg, edges, ctx, budget, unit, vocabulary, statement,
                                    stated is not None)
        self.release_ = PrivateRelease(
            topic_word=topics, noisy=None, report=self.report_, extra={"alpha": alpha},
            vocabulary=tuple(str(j) for j in range(topics.shape[1])) if vocabulary is None else vocabulary,
            # exact counts of the private data: the owner's eyes only, never the report
            diagnostics={"seconds": time.perf_counter() - t0, "n_documents_used": corpus.n_docs,
                         "n_short_documents": corpus.n_short, "n_units_used": corpus.n_used,
                         "n_zero_units": corpus.n_empty},
        )
        return self

    # ------------------------------------------------------------------------------------------------
    def _releases(self) -> tuple[int, tuple, SpectralBudget]:
        """(configuration, its edges, the budget of its releases) from the stated parameters: which quantities are
        released and each one's share of (epsilon, delta)."""
        cfg = check_int(self.configuration, "configuration", low=1, high=4)
        checked = check_privacy_parameters(self, nonprivate="topicdp.SpectralLDA")
        eps, delta = checked["epsilon"], checked["delta"]
        check_option(self.accounting, "accounting", ACCOUNTING_METHODS)
        edges, gaussian, laplace = releases(cfg, self.public_whitening is not None)
        if self.split is None:
            split = {name: f for name, f in DEFAULT_SPLITS[cfg].items() if name in gaussian + laplace}
        else:
            split = dict(self.split)
        return cfg, edges, SpectralBudget(eps, delta, split, gaussian, laplace, self.accounting)

    def planned_entries(self) -> list:
        """The ledger entries a fit makes, from the stated parameters only (before any data is read)."""
        unit = check_option(self.unit, "unit", UNITS)
        return labelled(self._releases()[2].planned_entries(), unit=unit, neighbours="replace-one")

    def _report(self, cfg: int, edges: tuple, ctx: Context, budget: SpectralBudget, unit: str, vocabulary,
                vocabulary_source: VocabularyStatement, stated: bool) -> PrivacyReport:
        totals = budget.totals()
        n = ctx.corpus.n_units  # the public n only: no count of usable units or short documents is read here
        how = ("stated by the caller as n_units" if stated else
               "taken as public: the corpus' own count, not stated by the caller, who vouches that it is public")
        zero = ("has zero statistics and stays in the count, so the moments are normalised by {0} whatever the "
                "texts (a unit replaced by an empty or out-of-vocabulary one is covered)")
        symbol, what = ("N", "documents") if unit == "document" else ("U", "users")
        counted = Check(f"number of {what} {symbol} (public)", True,
                        f"{symbol} = {n} ({'stated' if stated else 'taken as public'})")
        if unit == "document":
            neighbours = (f"Neighbouring corpora differ by replacing one document by any other; N = {n}, the number "
                          f"of documents counted before any filtering, is public ({how}). A document with fewer than "
                          "3 in-vocabulary tokens (or none) " + zero.format("N") + ".")
        else:
            neighbours = (f"Neighbouring corpora differ by replacing all documents of one user by any documents of "
                          f"another (any number of them, of any length); U = {n}, the number of users counted before "
                          f"any filtering, is public ({how}). A user none of whose documents has 3 in-vocabulary "
                          "tokens " + zero.format("U") + ". Each user's documents are weighted by 1/(their number), "
                          "so every user has total weight 1 (or 0) in the moments and the sensitivities depend on U "
                          "only; the numbers of documents are not published and the guarantee holds whatever they are.")
        notes = [
            neighbours,
            BIAS_NOTE,
            "Sensitivities are proven bounds in the norm each mechanism is calibrated to (Frobenius for the "
            "Gaussian releases; topicdp.spectral.sensitivity): M2 and M3 globally; the whitened tensor's and "
            "the decomposition's given the released M2, with the Procedure-1 bounds for configurations 3-4.",
            "Floating-point effects of sampling (Mironov 2012) are not accounted for.",
        ]
        if ctx.public is not None:
            notes.append("The whitening W and W^dagger were computed from a public reference corpus supplied by the "
                         "caller (public_whitening), not from the private data: no M2 was released and the whole "
                         "budget went to the tensor releases. That corpus is not protected by this guarantee.")
        ctx.checks.insert(0, counted)
        details = {
            "configuration": cfg,
            "edges": list(edges),
            "budget_split": budget.split,
            "accounting": budget.accounting,
            f"n_{what}": n,
            "n_words": ctx.corpus.n_words,
            "n_topics": ctx.k,
            "alpha0": ctx.alpha0,
            **ctx.details,
        }
        if "Delta_T" in ctx.details:
            sens, sens_method = ctx.details.get("Delta_decomposition", ctx.details["Delta_T"]), \
                "local bound (Procedure 1)" if cfg >= 3 else "global bound given the released M2"
        else:
            sens, sens_method = ctx.details["Delta3"], "global bound (App. H.1-H.2, corrected, Frobenius)"
        if vocabulary is None:
            vocab_status = "public: column indices (fit on a matrix)"
        else:
            vocab_status, vocab_note = vocabulary_source
            notes.append(vocab_note)
        step = ReportParts(_published(details, vocab_status, stated), notes, ctx.checks, details,
                           report_fields=dict(sensitivity=float(sens), sensitivity_method=sens_method,
                                              calibration=budget.accounting))
        return compose_report(
            step, mechanism=f"spectral-config-{cfg}", guarantee="approx-DP", unit=unit, neighbours="replace-one",
            epsilon=float(totals["best"]), delta=float(budget.delta), seeded=self.random_state is not None,
            composition=budget.releases,
            composition_total=[total(method, e, budget.delta) for method, e in totals.items()])


_STATED = ("public: a function of the stated parameters (k, alpha0, epsilon, delta, split) and of n, the public N "
           "(or U) counted before filtering")
#: status of each published detail of a spectral report but those that read the number of words (:data:`_SIZED`);
#: a key without a status is refused by save()
_DETAIL_STATUSES = {
    **{key: _STATED for key in ("configuration", "edges", "budget_split", "accounting", "n_topics", "alpha0",
                                "Delta2", "Delta3", "m2_noise_sigma", "m2_combined_sigma")},
    "whitening": "public: which whitening was used",
    "public_m2_eigenvalues": "public: computed from the caller's public reference corpus",
    "procedure1": "DP: Procedure-1 bounds released with Laplace noise",
    **{key: "post-processing: a function of released quantities and stated parameters"
       for key in ("released_m2_eigenvalues", "released_m2_next_eigenvalue", "Delta_T", "Delta_decomposition",
                   "Delta_output")},
}


#: status of the published unit count, by whether the caller stated it (n_units) or it was taken as public
_COUNT_STATUSES = {
    True: "public (stated): the number of {units} before any filtering, stated by the caller (n_units); the same "
          "for all replace-one neighbours",
    False: "public: taken as public, the number of {units} of the corpus given before any filtering; not stated "
           "by the caller, who vouches that it is public (the same for all replace-one neighbours)",
}


def _public_count(stated: int | None, corpus, counts, users, unit: str) -> int:
    """n: the stated count, checked against the corpus' own units as given, before any filtering (rows, or distinct
    owners, with the empty documents and users a :class:`topicdp.Corpus` dropped, as its ``log`` counts, added
    back), or that count taken as public."""
    log = getattr(corpus, "log", None)
    dropped = (("users_without_documents",) if unit == "user" else
               ("empty_documents_dropped", "documents_emptied_by_max_tokens_per_user"))
    found = count_units(counts, users) + sum(int(getattr(log, f, 0) or 0) for f in dropped)
    what = "users" if unit == "user" else "documents"
    if stated is not None and stated != found:
        # the same refusal for every replace-one neighbour; the corpus' own count (a private statistic) is not in it
        raise ValueError(f"n_units={stated} is stated public, but the corpus given does not have {stated} {what} "
                         "(counted before filtering; with a topicdp.Corpus, the empty documents and the users it "
                         "dropped are counted too): state the corpus' number of units")
    if found < 3:
        raise ValueError(f"the U-statistics of M3 need at least 3 units; the corpus given has {found} {what}")
    return found


def _published(details: dict, vocab_status: str, stated: bool) -> dict:
    derived = ("post-processing: a function of the stated N (or U) and parameters and (configurations 2-4) of "
               "released quantities")
    return {
        **dict.fromkeys(("topic_word", "extra.alpha"),
                        "post-processing: of the noisy releases at the configuration's edges"),
        "vocabulary": vocab_status,
        "report.checks": "post-processing: outcomes on released quantities and the stated N (or U)",
        **{f"report.{name}": derived for name in ("sensitivity", "sigma", "sigma_alternatives", "composition",
                                                  "composition_total")},
        **{f"report.details.{key}": _DETAIL_STATUSES[key] for key in details if key in _DETAIL_STATUSES},
        **{f"report.details.{key}": _sized_status(vocab_status) for key in _SIZED if key in details},
        **{f"report.details.{key}": _COUNT_STATUSES[stated].format(units=units)
           for key, units in (("n_documents", "documents"), ("n_users", "users")) if key in details},
    }


#: details that read the number of words d: stated only where the words are public
_SIZED = ("n_words", "m2_noise_spectral_norm_approx")


def _sized_status(vocab_status: str) -> str:
    """The status of a detail that reads d, the number of words: that of the stated parameters where the vocabulary
    is public; post-processing where it is a DP selection (d is its size); not covered where it is not protected."""
    head = vocab_status.split(":")[0]
    if head.startswith("public"):
        return _STATED
    if head in ("DP", "post-processing"):
        return ("post-processing: a function of the stated parameters and of d, the number of words the DP "
                "vocabulary kept")
    return f"{head}: a function of d, the number of words of the vocabulary ({vocab_status})"
