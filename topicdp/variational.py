"""Differentially private variational EM for LDA with per-unit normalised sufficient statistics.

A full-batch relative of DP stochastic variational inference (Park, Foulds, Chaudhuri & Welling 2016,
"Private topic modeling", Alg. 1), built so that the noise is small next to what people read:

* **Every privacy unit contributes a statistic of Frobenius norm at most 1**, whatever its size. Unit u's
  counts are scaled by ``w_u = 1 / ||a_u||_2`` with ``a_u = sum_{d in u} c_d`` its word-count vector
  (a document's own counts at document level). No document cap is needed for privacy, users with many
  documents are covered, and the noise does not depend on how many documents a user has.
* **Full batch, few iterations** (T of about 3 to 10) instead of hundreds of subsampled steps.
* **No clip-before-use bias in the output.** Park et al. map the noisy statistic to ``max(S~, 0)`` before
  using it; with many near-zero entries that adds about 0.4 sigma to each, which swamps a topic's mass. Here
  the released topics are the soft-thresholded ``max(S~ - tau sigma, 0)`` (``threshold`` = tau), which
  leaves the large entries (the words people read) nearly untouched and keeps pure-noise entries near 0.
  The E-steps in between see ``max(S~, 0)`` (below, "Which topics the E-step sees").

Algorithm (t = 1..T), with lambda_0 a data-independent random initialisation (from a random start, the first
releases fit more topics than K: "A start without public data" below):

    beta_{t-1} = lambda_{t-1} / rowsum(lambda_{t-1})            (post-processing of released values)
    S_u        = w_u sum_{d in u} c_d (.) phi_d(beta_{t-1})    (E-step, each document on its own)
    S~_t       = sum_u S_u + N(0, sigma^2 I_{K x V})           (the release)
    lambda_t   = eta + max(S~_t, 0)                            (post-processing: the next E-step's topics)

The released topics are the rows of ``eta + max(S~_T - tau sigma, 0)`` normalised to sum to 1. The E-step uses the point estimate
beta rather than variational Bayes' exp(E[log beta]): the unit weights put the statistics on an arbitrary
scale, and digamma at small pseudo-counts sharpens the topics so much that EM sticks in merged-topic optima
from more random starts than the point estimate does.

Without the noise (and so without the threshold, which is in units of sigma) the same passes are
:class:`VariationalLDA`, the non-private estimator: both run one implementation, the noise being the only
difference.

Privacy (proof)
---------------
*Per-unit bound.* For fixed beta, ``S_u`` is a non-negative K x V matrix whose column v sums to
``w_u a_uv`` (the responsibilities phi_dv sum to 1 over topics). A non-negative vector's L2 norm is at
most its L1 norm, so ``||S_u||_F^2 = sum_v ||S_u[:, v]||_2^2 <= sum_v (w_u a_uv)^2 = w_u^2 ||a_u||_2^2 = 1``.

*Sensitivity of one release.* beta_{t-1} is a function of the earlier releases only, and each document's
E-step depends on that document and beta alone (per-document stopping rule, see
:func:`topicdp.inference.batch_e_step`). Adding or removing one unit u changes the sum by S_u:
L2 sensitivity 1 (``neighbours="add-remove"``). Replacing u by u' changes it by S_u - S_u', and for two
non-negative matrices of norm <= 1, ``||S_u - S_u'||_F^2 = ||S_u||^2 + ||S_u'||^2 - 2 <S_u, S_u'> <= 2``:
sensitivity sqrt(2) (``neighbours="replace-one"``, number of units public).

*Composition.* T adaptively chosen Gaussian mechanisms, each (Delta / sigma)-GDP, compose to exactly
(sqrt(T) Delta / sigma)-GDP (Dong, Roth & Su 2022, "Gaussian differential privacy", Cor. 3.3), whose
(epsilon, delta) curve is the exact Gaussian profile (Balle & Wang 2018, Thm. 8). sigma is calibrated on
that profile (:func:`topicdp.rdp.calibrate_gaussian` with ``count=T``, analytic method), so the whole
run is (epsilon, delta)-DP for the chosen unit and neighbour relation. Everything after the releases
(thresholding, normalising, the topic order) is post-processing.

The E-step
----------
Each pass runs :func:`topicdp.inference.batch_e_step` on every (distinct) document: the compiled numba
engine when the optional ``fast`` extra is installed, else numpy; both make the same per-document
iteration (Blei, Ng & Jordan 2003 Eqs. 6-7; Hoffman, Blei & Bach 2010, Alg. 2) from the same start
gamma_d = alpha + N_d / K, and differ by floating-point rounding only. Every pass starts cold: warm-starting
each document's gamma from its own previous pass would be allowed (a function of the document and the released
topics only; see ``gamma0`` of :func:`~topicdp.inference.batch_e_step`) and saves inner iterations, but from a
random start it keeps documents near the assignments of the earlier, worse topics.

Which topics the E-step sees
----------------------------
The output is soft-thresholded at ``threshold`` x sigma, but the next E-step uses the noisy statistic clipped
at 0 only (both are post-processing). From a random start the topics separate through small differences
spread over many mid-frequency words; a threshold of a few sigma erases them and EM stalls in its symmetric
phase (with the noise switched off but the threshold kept, it stalls all the same: the threshold is the wall).

A start without public data
---------------------------
Full-batch EM from a random start, even without noise, converges to fixed points where two true topics share one
fitted topic and another is split, and leaves them slowly, while every pass costs budget. Over-parametrised EM does
not stall there: with more components than topics, every true topic is caught by at least one component early. So
from a random start the first ``warmup_iterations`` releases fit K' = 3K topics (the statistic keeps its per-unit
bound: the proof above holds for any number of rows), the warm-up's last release, soft-thresholded at tau sigma, is
merged into K topics by clustering its rows (:func:`merge_topics`, post-processing), and the remaining releases
refine the K merged topics. All T releases have the same sigma, so the accounting is the T-fold composition above.
Its topics are distinct themes, but they agree less with LDA's decomposition of the same text than topics started
from a public reference.

What is *not* covered here: the vocabulary (columns) must be public or selected under DP by the caller
(:mod:`topicdp.vocabulary`), and composed into the report.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ._names import (DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_NEIGHBOURS, DEFAULT_UNIT, UNITS, Neighbours, Unit,
                     neighbour_factor)
from ._progress import Progress, progress_enabled
from ._repeats import warn_on_repeated_release
from ._validation import (check_count_matrix, check_privacy_parameters, check_int, check_option,
                          check_random_state, check_real)
from .corpus import split_corpus
from .inference import batch_e_step
from .inference.estep import resolve_engine, unit_norms
from .rdp import PrivacyLedger, calibrate_gaussian
from .rdp.ledger import GaussianEntry
from .private_release import PrivateRelease, VocabularyStatement, vocabulary_of
from .transform import FoldInMixin
from .report import ReportParts, compose_report, ledger_totals

SENSITIVITY_METHOD = ("global bound: every unit's statistic has Frobenius norm <= 1 after per-unit weighting "
                      "(1 for add/remove, sqrt(2) for replace-one; topicdp.variational docstring)")


def unit_weights(X: sp.csr_matrix, doc_units: np.ndarray) -> np.ndarray:
    """Per-document weight ``1 / ||a_u||_2``, with a_u the summed counts of the document's unit.

    Depends on unit u's own documents only, so changing one unit changes only its own weights.
    """
    norms = unit_norms(X, doc_units)
    with np.errstate(divide="ignore"):
        w = np.where(norms > 0, 1.0 / norms, 0.0)
    return w[doc_units]


def merge_identical_documents(X: sp.csr_matrix, weights: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """One row per distinct document, weighted by the summed weights of its copies.

    Exact for :func:`unit_statistic`: each document's E-step depends on its own counts alone (it stops on its
    own, :func:`topicdp.inference.batch_e_step`) and its statistics scale with its weight, so k copies
    with weights w_1..w_k contribute the statistics of one copy with weight sum(w_i). Corpora resampled from
    a public reference (the sensitivity sampler's D, about n / ``|P|`` copies of each reference user) shrink
    several-fold; a corpus without repeats costs one pass to find that out.
    """
    X = sp.csr_matrix(X)
    first: dict[bytes, int] = {}
    keys = np.empty(X.shape[0], dtype=np.int64)
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        keys[d] = first.setdefault(X.indices[lo:hi].tobytes() + X.data[lo:hi].tobytes(), d)
    distinct, inverse = np.unique(keys, return_inverse=True)
    if distinct.size == X.shape[0]:
        return X, weights
    return X[distinct], np.bincount(inverse, weights=weights, minlength=distinct.size)


def unit_statistic(X: sp.csr_matrix, weights: np.ndarray, exp_elog_beta: np.ndarray, alpha: float, *,
                   chunk: int = 4096, max_iter: int = 50, tol: float = 1e-3, engine: str | None = None,
                   n_jobs: int = 1) -> np.ndarray:
    """sum_u S_u: the E-step on every document, each document's statistics scaled by its weight.

    ``engine`` picks the E-step's implementation (:func:`topicdp.inference.estep.resolve_engine`: the compiled
    numba kernel when installed, else numpy); both make the same per-document iteration (Blei, Ng & Jordan
    2003 Eqs. 6-7; Hoffman, Blei & Bach 2010, Alg. 2) from the same start, so the choice changes the
    statistic by floating-point rounding only and the privacy argument not at all. ``chunk`` documents are
    handled at a time (it bounds the numpy engine's temporaries; the numba engine has none).

    ``n_jobs`` threads take contiguous blocks of documents (the numba kernel releases the GIL; the numpy
    engine's large array operations do too); the blocks' sums are added in block order, so a given
    ``n_jobs`` always gives the same statistic. Each document's E-step depends on that document alone, so
    the split changes nothing but the order of additions.
    """
    engine = resolve_engine(engine)
    n_jobs = max(1, min(int(n_jobs), X.shape[0]))
    if n_jobs > 1:
        from concurrent.futures import ThreadPoolExecutor

        bounds = np.linspace(0, X.shape[0], n_jobs + 1).round().astype(int)
        with ThreadPoolExecutor(n_jobs) as pool:
            parts = list(pool.map(lambda ab: unit_statistic(X[ab[0]:ab[1]], weights[ab[0]:ab[1]], exp_elog_beta,
                                                            alpha, chunk=chunk, max_iter=max_iter, tol=tol,
                                                            engine=engine),
                                  zip(bounds[:-1], bounds[1:])))
        return np.sum(parts, axis=0)
    if engine == "numba":
        chunk = max(chunk, X.shape[0])  # no temporaries to bound, and no row slicing needed
    total = np.zeros(exp_elog_beta.shape)
    for start in range(0, X.shape[0], chunk):
        rows = slice(start, start + chunk)
        total += batch_e_step(X[rows], exp_elog_beta, alpha, max_iter=max_iter, tol=tol, row_weights=weights[rows],
                              engine=engine)[1]
    return total


def shard_statistic(shard, reader, *, beta: np.ndarray, alpha: float, unit: str, max_iter: int, tol: float,
                    n_jobs: int = 1) -> dict:
    """One shard's part of sum_u S_u (a task of a streamed pass, :meth:`topicdp.streaming.StreamingCorpus.map_reduce`).

    The shard is read whole (a worker holds one shard, not the corpus), its documents grouped into units by
    their user ids (``unit="user"``: every user's documents must be in this one shard, the input contract of
    streamed user-level releases) and weighted by :func:`unit_weights`. Returns the statistic and the shard's
    numbers of documents and units (diagnostics).
    """
    chunks = list(reader.read(shard))
    if not chunks or sum(c.n_docs for c in chunks) == 0:
        return {"S": np.zeros(beta.shape), "n_docs": 0, "n_units": 0}
    X = sp.vstack([c.X for c in chunks], format="csr").astype(np.float64)
    ids = [u for c in chunks for u in c.users]
    if unit == "user":
        index: dict = {}
        doc_units = np.fromiter((index.setdefault(u, len(index)) for u in ids), dtype=np.int64, count=len(ids))
    else:
        doc_units = np.arange(X.shape[0])
    X_distinct, weights = merge_identical_documents(X, unit_weights(X, doc_units))
    S = unit_statistic(X_distinct, weights, beta, alpha, max_iter=max_iter, tol=tol, n_jobs=n_jobs)
    return {"S": S, "n_docs": X.shape[0], "n_units": int(doc_units.max()) + 1}


#: Inner iterations of a warm-up E-step: its topics are rough, and converging each document to them buys nothing
#: (15 recovers the topics as well as 50, at about half the warm-up's cost).
WARMUP_E_STEP_MAX_ITER = 15


def merge_topics(lam: np.ndarray, n_topics: int, *, min_mass: float = 0.25) -> np.ndarray:
    """Merge the rows of an over-complete (K', V) topic matrix into ``n_topics`` rows (post-processing).

    Rows whose mass is below ``min_mass`` times the mean row mass are dropped first (after the soft threshold
    they are what noise left of a component that caught no topic; kept, they form a cluster of their own and
    push two true topics into one); the K heaviest rows are kept if fewer remain. The rest are
    clustered by average linkage on their Hellinger embeddings (square roots of the normalised rows), the tree
    cut at exactly ``n_topics`` clusters (:func:`scipy.cluster.hierarchy.cut_tree`), and each cluster's rows
    are summed, so a true topic caught by several components gets their joint mass. Deterministic: a
    function of ``lam`` alone; clusters come out in the order of their first row.
    """
    from scipy.cluster.hierarchy import cut_tree, linkage

    lam = np.asarray(lam, dtype=np.float64)
    if lam.shape[0] == n_topics:
        return lam
    mass = lam.sum(axis=1)
    keep = np.flatnonzero(mass >= min_mass * mass.mean())
    if keep.size < n_topics:
        keep = np.sort(np.argsort(-mass, kind="stable")[:n_topics])
    rows = lam[keep]
    labels = cut_tree(linkage(np.sqrt(rows / rows.sum(axis=1, keepdims=True)), method="average"),
                      n_clusters=[n_topics]).ravel()
    _, first = np.unique(labels, return_index=True)
    return np.array([rows[labels == labels[i]].sum(axis=0) for i in np.sort(first)])


class _VariationalEM(FoldInMixin, BaseEstimator):
    """Full-batch variational EM on per-unit weighted statistics: the algorithm of :class:`DPVariationalEM` and
    :class:`VariationalLDA`, which differ only in the noise.

    The subclasses state their parameters (``__init__``) and fit; this class runs the passes. The private class
    overrides the three places noise enters: :meth:`_perturb` (each pass' statistic), :meth:`_released` (the
    soft threshold of the released topics) and :meth:`_on_private_data` (the repeated-release warning).
    """

    #: the passes are releases: logged and shown as a progress bar, and named so in the progress lines
    _private = False
    _name = "vem"

    def _validate(self) -> None:
        check_int(self.n_topics, "n_topics", low=1)
        check_option(self.unit, "unit", UNITS)
        check_int(self.n_iterations, "n_iterations", low=1)
        check_int(self.e_step_max_iter, "e_step_max_iter", low=1)
        check_real(self.e_step_tol, "e_step_tol", low=0.0)
        check_int(self.n_jobs, "n_jobs", low=1)
        if self.warmup_iterations != "auto":
            T_warm = check_int(self.warmup_iterations, "warmup_iterations", low=0, high=self.n_iterations - 1)
            if self.init is not None and T_warm > 0:
                raise ValueError("warmup_iterations must be 0 or 'auto' with init (public topics need no warm-up)")
        if self.warmup_topics is not None:
            check_int(self.warmup_topics, "warmup_topics", low=self.n_topics)

    def warmup_schedule(self) -> tuple[int, int]:
        """(T_warm, K_warm): the first T_warm passes fit K_warm topics (0 and K: no warm-up).

        ``warmup_iterations="auto"`` is 0 from public topics (``init``) and ``4 T // 7`` from a random start (4 of
        the default 7); ``warmup_topics=None`` is 3 K.
        """
        self._validate()
        if self.warmup_iterations == "auto":
            T_warm = 0 if self.init is not None else 4 * self.n_iterations // 7
        else:
            T_warm = int(self.warmup_iterations)
        K_warm = 3 * self.n_topics if self.warmup_topics is None else int(self.warmup_topics)
        return (T_warm, K_warm) if T_warm > 0 else (0, self.n_topics)

    def _run(self, corpus, client, ledger) -> dict:
        """The T passes (module docstring, "Algorithm"). Sets ``components_``, ``topic_word_``, ``alpha_``,
        ``eta_`` and ``n_features_in_``; returns the numbers of documents and units (private diagnostics)."""
        K = self.n_topics
        alpha = 1.0 / K if self.alpha is None else check_real(self.alpha, "alpha", low=0.0)
        eta = 1.0 / K if self.eta is None else check_real(self.eta, "eta", low=0.0)
        T_warm, K_warm = self.warmup_schedule()
        statistic, V, sizes = self._statistic(corpus, client, ledger)
        self.n_features_in_ = V
        rng = check_random_state(self.random_state)
        lam = self._initial_topics(K_warm if T_warm else K, V, eta, rng)
        # private fits log every pass (each is a release); the noiseless ones (public starts, the sampler's
        # fits) stay quiet
        passes = Progress(self.n_iterations, f"{self._name} passes",
                          bar=self._private and progress_enabled(getattr(self, "progress", None)),
                          log_every=0 if self._private else math.inf)
        for t in range(self.n_iterations):
            beta = lam / lam.sum(axis=1, keepdims=True)
            # the warm-up keeps the documents' total Dirichlet concentration K alpha, and its E-steps stop earlier
            warm = t < T_warm
            S = statistic(beta, alpha * K / K_warm if warm else alpha,
                          min(self.e_step_max_iter, WARMUP_E_STEP_MAX_ITER) if warm else self.e_step_max_iter)
            S = self._perturb(S, rng)
            lam = self._next_e_step_topics(S, eta)
            if t + 1 == T_warm:  # the over-complete warm-up ends: its released topics, merged into K
                lam = merge_topics(self._released(S, eta), K)
            passes.update()
        passes.close()
        lam = self._released(S, eta)
        self.components_ = lam
        self.topic_word_ = lam / lam.sum(axis=1, keepdims=True)
        self.alpha_, self.eta_ = alpha, eta
        return sizes

    def _perturb(self, S: np.ndarray, rng) -> np.ndarray:
        """The statistic of a pass as the next steps see it (the private class adds the noise here)."""
        return S

    def _released(self, S: np.ndarray, eta: float) -> np.ndarray:
        """lambda of the output (and of the warm-up's merge) from a pass' statistic."""
        return eta + np.maximum(S, 0.0)

    def _next_e_step_topics(self, S: np.ndarray, eta: float) -> np.ndarray:
        """lambda of the next E-step from a statistic: clipped at 0 only, not soft-thresholded as a private
        release is (module docstring, "Which topics the E-step sees"). Post-processing either way."""
        return eta + np.maximum(S, 0.0)

    def _on_private_data(self, X: sp.csr_matrix, ledger) -> None:
        """Called once the in-memory counts are read (the private class warns on repeated releases here)."""

    def _initial_topics(self, K: int, V: int, eta: float, rng) -> np.ndarray:
        if self.init is None:
            return eta + rng.gamma(1.0, 1.0, size=(K, V))  # data-independent start
        init = np.asarray(self.init, dtype=float)
        if init.shape != (K, V) or not np.all(np.isfinite(init)) or init.min() < 0 or np.any(init.sum(axis=1) <= 0):
            raise ValueError(f"init must be a non-negative ({K}, {V}) array with positive rows (public topics), "
                             f"got shape {init.shape}")
        return init / init.sum(axis=1, keepdims=True)  # only each row's proportions matter to the E-step

    def _statistic(self, corpus, client, ledger):
        """((beta, alpha, max_iter) -> sum_u S_u, V, sizes): in memory, or a map-reduce over a streamed corpus' shards."""
        from .streaming import StreamingCorpus

        options: dict = dict(tol=self.e_step_tol, n_jobs=self.n_jobs)
        if isinstance(corpus, StreamingCorpus):
            sizes: dict = {}
            shown = self._private and progress_enabled(getattr(self, "progress", None))

            def streamed(beta: np.ndarray, alpha: float, max_iter: int) -> np.ndarray:
                part = corpus.map_reduce(shard_statistic, client=client, beta=beta, alpha=alpha, max_iter=max_iter,
                                         unit=self.unit, progress=f"{self._name} pass" if shown else None,
                                         **options)
                sizes.update(n_docs=part["n_docs"], n_units=part["n_units"])
                return part["S"]
            return streamed, corpus.n_words, sizes
        if client is not None:
            raise ValueError("client runs the passes of a StreamingCorpus; an in-memory corpus is fitted here")
        X, doc_units = self._counts_and_units(corpus)
        self._on_private_data(X, ledger)
        X_distinct, weights = merge_identical_documents(X, unit_weights(X, doc_units))

        def in_memory(beta: np.ndarray, alpha: float, max_iter: int) -> np.ndarray:
            return unit_statistic(X_distinct, weights, beta, alpha, max_iter=max_iter, **options)
        return in_memory, X.shape[1], {"n_docs": X.shape[0], "n_units": int(doc_units.max()) + 1 if X.shape[0] else 0}

    def _counts_and_units(self, corpus) -> tuple[sp.csr_matrix, np.ndarray]:
        counts, doc_users, _ = split_corpus(corpus)
        if doc_users is not None:  # a corpus: its counts are used as they are (a Corpus validated them)
            X = sp.csr_matrix(counts, dtype=np.float64)
            return X, doc_users if self.unit == "user" else np.arange(X.shape[0])
        if self.unit == "user":
            raise ValueError("unit='user' needs a topicdp.Corpus (which documents belong to which user)")
        X = check_count_matrix(counts)
        return X, np.arange(X.shape[0])


def _vocabulary(corpus, n_words: int) -> tuple:
    """The columns' words: a corpus' vocabulary, else the column indices as strings (fit on a matrix)."""
    return tuple(getattr(corpus, "vocabulary", None) or (str(j) for j in range(n_words)))


class VariationalLDA(_VariationalEM):
    """Non-private LDA by full-batch variational EM on per-unit weighted statistics.

    The algorithm of :class:`DPVariationalEM` without its noise (module docstring): the same per-unit
    weights, warm-up, merge, E-step and start, so the same seed gives the topics the private estimator would
    release at infinite epsilon. Without noise there is nothing to soft-threshold and nothing to account: it
    has no ``epsilon``, ``delta``, ``neighbours`` or ``threshold``, and no privacy report. Its uses: public
    starting topics (:func:`public_init`), the ``vem`` model of the agnostic road
    (:class:`topicdp.adapters.VariationalModel`), and the noiseless reference of comparisons.

    Parameters
    ----------
    n_topics : int, default=10
    unit : {"user", "document"}, default="user"
        Whose counts are weighted to norm 1 (the privacy unit of the private estimator it mirrors).
        ``"user"`` needs a :class:`~topicdp.Corpus` (its ``doc_users``).
    n_iterations : int >= 1, default=7
        T, the number of EM passes (warm-up included); the private estimator's default.
    alpha, eta : float, optional
        Dirichlet priors on document proportions and topics; default 1/K each.
    init : None or (K, V) array, default=None
        Starting topics (rows are normalised); None draws them at random, independently of the data.
    warmup_iterations : int in [0, n_iterations - 1] or "auto", default="auto"
        T_warm: the first T_warm passes fit ``warmup_topics`` topics, then merged into K (:func:`merge_topics`).
        "auto": 0 with ``init``, ``4 * n_iterations // 7`` from a random start.
    warmup_topics : int >= n_topics or None, default=None
        K' of the warm-up; None is 3 K.
    e_step_max_iter, e_step_tol : int, float, default=50, 1e-3
        Per-document variational iterations.
    n_jobs : int >= 1, default=1
        Threads of the E-step (:func:`unit_statistic`).
    random_state : None, int or Generator
        Seeds the random start.

    Attributes
    ----------
    components_ : (K, V) array
        lambda_T.
    topic_word_ : (K, V) array
        The topics (rows sum to 1).
    vocabulary_ : tuple of str
        The columns' words (their indices as strings when fit on a matrix); :meth:`transform` checks a Corpus
        against it.

    Examples
    --------
    >>> from topicdp.datasets import synthetic_lda
    >>> X = synthetic_lda(100, 40, 3, random_state=0).X
    >>> model = VariationalLDA(3, unit="document", n_iterations=2, random_state=0).fit(X)
    >>> model.topic_word_.shape, model.transform(X[:5]).shape
    ((3, 40), (5, 3))
    """

    def __init__(self, n_topics: int = 10, *, unit: Unit | str = DEFAULT_UNIT, n_iterations: int = 7,
                 alpha: float | None = None, eta: float | None = None, init=None,
                 warmup_iterations: int | str = "auto", warmup_topics: int | None = None,
                 e_step_max_iter: int = 50, e_step_tol: float = 1e-3, n_jobs: int = 1, random_state=None):
        self.n_topics = n_topics
        self.unit = unit
        self.n_iterations = n_iterations
        self.alpha = alpha
        self.eta = eta
        self.init = init
        self.warmup_iterations = warmup_iterations
        self.warmup_topics = warmup_topics
        self.e_step_max_iter = e_step_max_iter
        self.e_step_tol = e_step_tol
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, corpus, y=None, *, client=None) -> "VariationalLDA":
        """Fit on a :class:`~topicdp.Corpus` (or a document-term matrix with ``unit="document"``), or on a
        :class:`~topicdp.streaming.StreamingCorpus` read pass by pass (each pass a map-reduce over its shards,
        locally or on the Dask ``client``; see :meth:`DPVariationalEM.fit`)."""
        self._validate()
        self._run(corpus, client, None)
        self.vocabulary_ = _vocabulary(corpus, self.n_features_in_)
        return self


class DPVariationalEM(_VariationalEM):
    """(epsilon, delta)-DP LDA by full-batch variational EM on per-unit normalised statistics: the ``dp-vem`` mechanism.

    It has no plan (no count, no forecast, no refusal): it is what the pipeline runs for the planned
    :class:`topicdp.DPVariationalLDA`, and releases whatever it fits. Without noise the same algorithm is
    :class:`VariationalLDA`.

    Parameters
    ----------
    n_topics : int, default=10
    epsilon : float > 0, default=3.0 (``topicdp._names.DEFAULT_EPSILON``)
        Total budget of the T releases.
    delta : float in (0, 1), default=1e-6 (``topicdp._names.DEFAULT_DELTA``)
    unit : {"user", "document"}, default="user" (``topicdp._names.DEFAULT_UNIT``)
        Whose contribution is protected. ``"user"`` needs a :class:`~topicdp.Corpus` (its ``doc_users``).
    neighbours : Neighbours or {"add-remove", "replace-one"}, default="add-remove" (``topicdp._names.DEFAULT_NEIGHBOURS``)
        Sensitivity 1, resp. sqrt(2) (see the module docstring).
    n_iterations : int >= 1, default=7
        T, the number of noisy releases (all with the same sigma, warm-up included).
    threshold : float >= 0, default=1.0
        tau: the released topics are the last noisy statistic soft-thresholded at tau * sigma (so is the
        warm-up's, before it is merged); the E-steps see it clipped at 0. tau = 1 recovers the topics better
        than 0 or 2, and the top words people read sit far above either.
    alpha, eta : float, optional
        Dirichlet priors on document proportions and topics; default 1/K each.
    init : None or (K, V) array, default=None
        Starting topics. None draws them at random, independently of the data. An array must be *public*
        (e.g. topics fitted on a public reference corpus, :func:`public_init`): EM from a random start needs
        many iterations to separate topics, each of which costs budget, while from a good public start 2 or 3
        suffice.
    warmup_iterations : int in [0, n_iterations - 1] or "auto", default="auto"
        T_warm: the first T_warm releases fit ``warmup_topics`` topics (an over-complete warm-up), whose
        released topics are then merged into K (:func:`merge_topics`) for the remaining releases. "auto": 0
        with ``init`` (public topics need none), ``4 * n_iterations // 7`` from a random start.
    warmup_topics : int >= n_topics or None, default=None
        K' of the warm-up; None is 3 K.
    e_step_max_iter, e_step_tol : int, float, default=50, 1e-3
        Per-document variational iterations.
    n_jobs : int >= 1, default=1
        Threads of the E-step in this process (:func:`unit_statistic`); on a Dask cluster, threads of each
        task. The numba engine runs one document per thread at a time, so set ``NUMBA_NUM_THREADS`` and the
        BLAS threads to 1 and choose the parallelism here.
    random_state : None, int or Generator
        Seeds the initialisation and the noise; a seeded private run is marked ``seeded``.
    progress : bool or None, default=None
        Show the passes' progress: a tqdm bar in a notebook or on a terminal, otherwise one line per pass with an
        ETA on stderr. None and True show it unless ``TOPICDP_PROGRESS=0``; False never does
        (:mod:`topicdp._progress`). The lines go to the ``topicdp`` logger at INFO either way.

    Attributes
    ----------
    components_ : (K, V) array
        lambda_T.
    topic_word_ : (K, V) array
        Released topics (rows sum to 1).
    sigma_ : float
        Noise standard deviation of each release.
    sensitivity_ : float
        L2 sensitivity of each release (1 or sqrt(2)).
    release_ : PrivateRelease
        What may be published: the topics, the vocabulary and the privacy report.

    Examples
    --------
    >>> import numpy as np
    >>> from topicdp.datasets import synthetic_lda
    >>> X = synthetic_lda(100, 40, 3, random_state=0).X
    >>> model = DPVariationalEM(3, epsilon=2.0, unit="document", n_iterations=2, random_state=0).fit(X)
    >>> model.topic_word_.shape, model.release_.report.guarantee
    ((3, 40), 'approx-DP')
    >>> theta = model.transform(X[:5])  # new documents folded into the released topics
    >>> theta.shape, bool(np.allclose(theta.sum(axis=1), 1.0))
    ((5, 3), True)
    """

    _private = True
    _name = "dp-vem"

    def __init__(self, n_topics: int = 10, *, epsilon: float = DEFAULT_EPSILON, delta: float = DEFAULT_DELTA,
                 unit: Unit | str = DEFAULT_UNIT, neighbours: Neighbours | str = DEFAULT_NEIGHBOURS,
                 n_iterations: int = 7,
                 threshold: float = 1.0, alpha: float | None = None, eta: float | None = None,
                 init=None, warmup_iterations: int | str = "auto", warmup_topics: int | None = None,
                 e_step_max_iter: int = 50, e_step_tol: float = 1e-3, n_jobs: int = 1, random_state=None,
                 progress: bool | None = None):
        self.n_topics = n_topics
        self.progress = progress
        self.warmup_iterations = warmup_iterations
        self.warmup_topics = warmup_topics
        self.n_jobs = n_jobs
        self.init = init
        self.epsilon = epsilon
        self.delta = delta
        self.unit = unit
        self.neighbours = neighbours
        self.n_iterations = n_iterations
        self.threshold = threshold
        self.alpha = alpha
        self.eta = eta
        self.e_step_max_iter = e_step_max_iter
        self.e_step_tol = e_step_tol
        self.random_state = random_state

    def _validate(self) -> None:
        super()._validate()
        check_privacy_parameters(self, nonprivate="topicdp.VariationalLDA")
        check_real(self.threshold, "threshold", low=0.0, low_open=False)
        if self.progress is not None and not isinstance(self.progress, bool):
            raise TypeError(f"progress must be True, False or None, got {self.progress!r}")

    def noise_scale(self) -> float:
        """sigma of each release, from public parameters only (:func:`noise_scale`)."""
        self._validate()
        return noise_scale(self.epsilon, self.delta, neighbours=self.neighbours, n_iterations=self.n_iterations)

    def fit(self, corpus, y=None, *, vocabulary_source: "str | VocabularyStatement | None" = None,
            ledger: PrivacyLedger | None = None, client=None) -> "DPVariationalEM":
        """Fit on a :class:`~topicdp.Corpus` (or a document-term matrix with ``unit="document"``), or on a
        :class:`~topicdp.streaming.StreamingCorpus` read pass by pass.

        A streamed corpus is never held in memory: each pass is a map-reduce over its shards
        (:func:`shard_statistic`, one shard per task, locally or on the Dask ``client``), the partial sums are
        added in a fixed order and the noise is drawn once, here; the same seed gives the same topics locally
        and on a cluster. At ``unit="user"`` every user's documents must lie in one shard (the input contract;
        :mod:`topicdp.pipeline.sources` checks it when it reads text shards).

        ``vocabulary_source``: ``"public"`` (a public word list) or ``"private-texts"`` (then the vocabulary is NOT
        COVERED and the report says so); default: where the corpus' words came from
        (:attr:`topicdp.Corpus.vocabulary_source`). A vocabulary selected under DP is composed by the
        release pipeline (:func:`topicdp.pipeline.release`), which records it in ``ledger``.

        ``ledger`` (a :class:`topicdp.rdp.PrivacyLedger`, optional): the T releases (one Gaussian entry with
        ``count=T``, labelled with the unit and neighbour relation) are checked against its budget before the
        data is read or noise is drawn (:class:`topicdp.rdp.BudgetExceededError`), and recorded in it after the
        fit.
        """
        vocab_status, vocab_note = vocabulary_of(corpus, vocabulary_source)
        self._validate()
        entry = planned_entry(self.epsilon, self.delta, unit=self.unit, neighbours=self.neighbours,
                              n_iterations=self.n_iterations)
        self.sensitivity_, self.sigma_ = entry.sensitivity, entry.sigma
        entries = []
        if ledger is not None:
            entries = [entry]
            ledger.check(entries)
        sizes = self._run(corpus, client, ledger)
        self.release_ = PrivateRelease(
            topic_word=self.topic_word_, noisy=None, vocabulary=_vocabulary(corpus, self.n_features_in_),
            report=self._report(vocabulary_source, vocab_status, vocab_note),
            diagnostics={"n_docs": int(sizes["n_docs"]), "n_units": int(sizes["n_units"])})
        if ledger is not None:
            ledger.record(entries)
        return self

    def _report(self, vocabulary_source, vocab_status: str, vocab_note: str):
        """The privacy report: T Gaussian releases composed exactly (GDP), plus a DP vocabulary if any."""
        T, sigma, D = self.n_iterations, self.sigma_, self.sensitivity_
        published = {
            "topic_word": "post-processing: the last noisy statistic, soft-thresholded and normalised",
            "vocabulary": vocab_status,
            **{f"report.{k}": "public: a function of the stated epsilon, delta, T and neighbour relation only"
               for k in ("sensitivity", "sigma", "composition", "composition_total")},
            "report.details.algorithm": "public: the stated parameters",
        }
        notes = [vocab_note, "The per-unit weights make the sensitivity independent of how many documents a unit "
                 "has: no document cap is needed for the guarantee."]
        if self.init is not None:
            notes.append("The starting topics were given by the caller and are taken to be public (e.g. fitted on "
                         "a public reference corpus).")
        T_warm, K_warm = self.warmup_schedule()
        details = {"algorithm": {"n_iterations": T, "threshold": self.threshold, "alpha": self.alpha_,
                                 "eta": self.eta_, "start": "random" if self.init is None else "public topics",
                                 "warmup_iterations": T_warm, "warmup_topics": K_warm}}
        epsilon, delta = self.epsilon, self.delta
        own = PrivacyLedger()  # this fit's releases; the totals are the ledger's (exact GDP among them)
        own.record([GaussianEntry("dp-vem", sigma, D, T)])
        totals = ledger_totals(own, delta)
        step = ReportParts(published, notes, details=details, report_fields=dict(
            sensitivity=D, sensitivity_method=SENSITIVITY_METHOD, sigma=sigma,
            calibration="analytic: exact Gaussian profile of the T-fold composition (Balle & Wang 2018; GDP)"))
        return compose_report(
            step, mechanism="dp-vem", guarantee="approx-DP", unit=self.unit, neighbours=self.neighbours,
            epsilon=epsilon, delta=delta, seeded=self.random_state is not None,
            composition=[{"name": f"iteration {t + 1}" + (f" (warm-up, {K_warm} topics)" if t < T_warm else ""),
                          "mechanism": "gaussian", "sigma": sigma, "sensitivity": D} for t in range(T)],
            composition_total=totals,
        )

    def _perturb(self, S: np.ndarray, rng) -> np.ndarray:
        """The release: the pass' statistic plus N(0, sigma^2) on every entry."""
        return S + rng.normal(0.0, self.sigma_, size=S.shape)

    def _released(self, S: np.ndarray, eta: float) -> np.ndarray:
        """lambda as released from a noisy statistic: soft-thresholded at tau sigma (post-processing)."""
        return eta + np.maximum(S - self.threshold * self.sigma_, 0.0)

    def _on_private_data(self, X: sp.csr_matrix, ledger) -> None:
        warn_on_repeated_release(X, "DPVariationalEM.fit", ledger)


def noise_scale(epsilon: float, delta: float, *, neighbours: str, n_iterations: int) -> float:
    """sigma of each of dp-vem's ``n_iterations`` Gaussian releases: the T-fold composition of Gaussian mechanisms
    of L2 sensitivity :func:`topicdp._names.neighbour_factor` calibrated exactly to (epsilon, delta) (Balle & Wang 2018, analytic
    Gaussian mechanism; Dong, Roth & Su 2019, Cor. 3.3: T releases at sigma compose to sqrt(T) D / sigma-GDP)."""
    return calibrate_gaussian(epsilon, delta, neighbour_factor(neighbours), method="analytic", count=n_iterations)


def planned_entry(epsilon: float, delta: float, *, unit: str, neighbours: str, n_iterations: int) -> GaussianEntry:
    """The ledger entry of dp-vem's ``n_iterations`` releases, from public parameters only: what ``fit`` checks and
    records, and what a persisted ledger plans before the corpus is read."""
    return GaussianEntry("dp-vem", noise_scale(epsilon, delta, neighbours=neighbours, n_iterations=n_iterations),
                         neighbour_factor(neighbours), n_iterations, unit=unit, neighbours=neighbours)
