"""Differentially private variational EM for LDA with per-unit normalised sufficient statistics (``dp-vem``).

A full-batch relative of DP stochastic variational inference (Park, Foulds, Chaudhuri & Welling 2016, "Private
topic modeling", Alg. 1). Unit u's counts are scaled by ``w_u = 1 / ||a_u||_2`` (``a_u`` its summed word counts), so
every unit's statistic has Frobenius norm at most 1 and no document cap is needed. For t = 1..T, from a
data-independent random lambda_0:

    beta_{t-1} = lambda_{t-1} / rowsum(lambda_{t-1})            (post-processing of released values)
    S_u        = w_u sum_{d in u} c_d (.) phi_d(beta_{t-1})    (E-step, each document on its own)
    S~_t       = sum_u S_u + N(0, sigma^2 I_{K x V})           (the release)
    lambda_t   = eta + max(S~_t, 0)                            (post-processing: the next E-step's topics)

The released topics are the rows of ``eta + max(S~_T - tau sigma, 0)`` normalised (a soft threshold; the E-steps
see ``max(S~, 0)`` only, which keeps the small differences through which topics separate). The E-step uses the
point estimate beta, not exp(E[log beta]). From a random start the first ``warmup_iterations`` releases fit K' = 3K
topics, merged into K (:func:`merge_topics`, post-processing). :class:`VariationalLDA` is the same without noise.

Privacy. For fixed beta, ``S_u`` is non-negative and its column v sums to ``w_u a_uv``, so ``||S_u||_F^2 <= sum_v
(w_u a_uv)^2 = 1`` (L2 <= L1 for a non-negative vector). beta_{t-1} is a function of earlier releases only and each
document's E-step reads that document and beta alone (:func:`topicdp.inference.batch_e_step`), so adding or
removing a unit changes the sum by S_u (sensitivity 1), and replacing u by u' by S_u - S_u', of squared norm
``||S_u||^2 + ||S_u'||^2 - 2 <S_u, S_u'> <= 2`` (sensitivity sqrt(2)). T adaptive Gaussian mechanisms, each
(Delta / sigma)-GDP, compose to (sqrt(T) Delta / sigma)-GDP (Dong, Roth & Su 2022, "Gaussian differential
privacy", Cor. 3.3), whose (epsilon, delta) curve is the exact Gaussian profile (Balle & Wang 2018, Thm. 8): sigma
is calibrated on it. The rest is post-processing; the vocabulary must be public or selected under DP.
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
                          check_random_state, check_real, store_init)
from .corpus import split_corpus
from .inference import batch_e_step
from .inference.estep import resolve_engine, unit_norms
from .rdp import PrivacyLedger, calibrate_gaussian
from .rdp.ledger import GaussianEntry
from .private_release import PrivateRelease, VocabularyStatement, vocabulary_of
from .transform import FoldInMixin
from .report import ReportParts, compose_report, ledger_totals
from .streaming import StreamingCorpus

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
    """One row per distinct document, weighted by the summed weights of its copies: exact for
    :func:`unit_statistic`, as a document's E-step depends on its own counts alone."""
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
    """sum_u S_u: the E-step (Blei, Ng & Jordan 2003, Eqs. 6-7) on every document, scaled by its weight.

    ``engine``: :func:`topicdp.inference.estep.resolve_engine` (numba or numpy differ by rounding only).
    ``chunk`` bounds the numpy engine's temporaries. ``n_jobs`` threads take contiguous blocks whose sums are
    added in block order, so a given ``n_jobs`` always gives the same statistic.
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
    """One shard's part of sum_u S_u and its numbers of documents and units (a task of
    :meth:`topicdp.streaming.StreamingCorpus.map_reduce`; at ``unit="user"`` a user's documents lie in one shard)."""
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


#: Inner iterations of a warm-up E-step: its topics are rough, and converging each document to them buys nothing.
WARMUP_E_STEP_MAX_ITER = 15


def merge_topics(lam: np.ndarray, n_topics: int, *, min_mass: float = 0.25) -> np.ndarray:
    """Merge the rows of an over-complete (K', V) topic matrix into ``n_topics`` rows (post-processing).

    Rows below ``min_mass`` times the mean row mass (noise left of a component that caught no topic) are
    dropped, keeping at least the K heaviest; the rest are clustered by average linkage on their Hellinger
    embeddings, cut at ``n_topics`` clusters, and each cluster's rows summed. Deterministic; clusters come out
    in the order of their first row.
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
    """The passes of :class:`DPVariationalEM` and :class:`VariationalLDA`; the private class overrides
    :meth:`_perturb`, :meth:`_released` and :meth:`_on_private_data`."""

    #: the passes are releases: logged and shown as a progress bar
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
        """(T_warm, K_warm): the first T_warm passes fit K_warm topics ("auto": 0 with ``init``, else 4 T // 7;
        None: 3 K); (0, K) without a warm-up."""
        self._validate()
        if self.warmup_iterations == "auto":
            T_warm = 0 if self.init is not None else 4 * self.n_iterations // 7
        else:
            T_warm = int(self.warmup_iterations)
        K_warm = 3 * self.n_topics if self.warmup_topics is None else int(self.warmup_topics)
        return (T_warm, K_warm) if T_warm > 0 else (0, self.n_topics)

    def _run(self, corpus, client, ledger) -> dict:
        """The T passes (module docstring); returns the numbers of documents and units (private diagnostics)."""
        K = self.n_topics
        alpha = 1.0 / K if self.alpha is None else check_real(self.alpha, "alpha", low=0.0)
        eta = 1.0 / K if self.eta is None else check_real(self.eta, "eta", low=0.0)
        T_warm, K_warm = self.warmup_schedule()
        statistic, V, sizes = self._statistic(corpus, client, ledger)
        self.n_features_in_ = V
        rng = check_random_state(self.random_state)
        if self.init is None:
            lam = eta + rng.gamma(1.0, 1.0, size=(K_warm if T_warm else K, V))  # data-independent start
        else:  # public topics (no warm-up): only each row's proportions matter to the E-step
            init = np.asarray(self.init, dtype=float)
            if init.shape != (K, V) or not np.all(np.isfinite(init)) or init.min() < 0 or np.any(init.sum(axis=1) <= 0):
                raise ValueError(f"init must be a non-negative ({K}, {V}) array with positive rows (public topics), "
                                 f"got shape {init.shape}")
            lam = init / init.sum(axis=1, keepdims=True)
        # private fits log every pass (each is a release); the noiseless ones stay quiet
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

    def _next_e_step_topics(self, S: np.ndarray, eta: float) -> np.ndarray:
        """lambda of the next E-step: clipped at 0 only, never soft-thresholded (module docstring)."""
        return eta + np.maximum(S, 0.0)

    #: lambda of the output (and of the warm-up's merge); the private class soft-thresholds it
    _released = _next_e_step_topics

    def _on_private_data(self, X: sp.csr_matrix, ledger) -> None:
        """Called once the in-memory counts are read (the private class warns on repeated releases here)."""

    def _statistic(self, corpus, client, ledger):
        """((beta, alpha, max_iter) -> sum_u S_u, V, sizes): in memory, or a map-reduce over a stream's shards."""
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
        counts, doc_users, _ = split_corpus(corpus)
        if doc_users is not None:  # a corpus: its counts are used as they are (a Corpus validated them)
            X = sp.csr_matrix(counts, dtype=np.float64)
            doc_units = doc_users if self.unit == "user" else np.arange(X.shape[0])
        elif self.unit == "user":
            raise ValueError("unit='user' needs a topicdp.Corpus (which documents belong to which user)")
        else:
            X = check_count_matrix(counts)
            doc_units = np.arange(X.shape[0])
        self._on_private_data(X, ledger)
        X_distinct, weights = merge_identical_documents(X, unit_weights(X, doc_units))

        def in_memory(beta: np.ndarray, alpha: float, max_iter: int) -> np.ndarray:
            return unit_statistic(X_distinct, weights, beta, alpha, max_iter=max_iter, **options)
        return in_memory, X.shape[1], {"n_docs": X.shape[0], "n_units": int(doc_units.max()) + 1 if X.shape[0] else 0}


def _vocabulary(corpus, n_words: int) -> tuple:
    """The columns' words: a corpus' vocabulary, else the column indices as strings (fit on a matrix)."""
    return tuple(getattr(corpus, "vocabulary", None) or (str(j) for j in range(n_words)))


class VariationalLDA(_VariationalEM):
    """Non-private LDA by full-batch variational EM on per-unit weighted statistics.

    :class:`DPVariationalEM` without its noise, so the same seed gives the topics the private estimator would
    release at infinite epsilon (public starts, :func:`public_init`; the agnostic road's ``vem`` model). The
    parameters are :class:`DPVariationalEM`'s; ``vocabulary_`` holds the columns' words.

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
        store_init(self, locals())

    def fit(self, corpus, y=None, *, client=None) -> "VariationalLDA":
        """Fit on a Corpus, a count matrix (``unit="document"``) or a StreamingCorpus (:meth:`DPVariationalEM.fit`)."""
        self._validate()
        self._run(corpus, client, None)
        self.vocabulary_ = _vocabulary(corpus, self.n_features_in_)
        return self


class DPVariationalEM(_VariationalEM):
    """(epsilon, delta)-DP LDA by full-batch variational EM on per-unit normalised statistics (``dp-vem``).

    It has no plan (no count, no forecast, no refusal): the pipeline runs it for :class:`topicdp.DPVariationalLDA`.

    Parameters
    ----------
    epsilon, delta : float, default=3.0, 1e-6
        Total budget of the T releases.
    unit : {"user", "document"}, default="user"
        Whose counts are weighted to norm 1; ``"user"`` needs a :class:`~topicdp.Corpus`.
    neighbours : {"add-remove", "replace-one"}, default="add-remove"
        Sensitivity 1, resp. sqrt(2).
    n_iterations : int >= 1, default=7
        T, the number of noisy releases (all with the same sigma, warm-up included).
    threshold : float >= 0, default=1.0
        tau: the released topics are the last noisy statistic soft-thresholded at tau * sigma.
    alpha, eta : float, optional
        Dirichlet priors on document proportions and topics; default 1/K each.
    init : None or (K, V) array, default=None
        Starting topics, which must be *public* (:func:`topicdp.forecast.public_init`); None: random.
    warmup_iterations, warmup_topics : int or "auto", int or None
        The first T_warm releases (:meth:`warmup_schedule`) fit K' (None: 3 K) topics, merged into K.
    n_jobs : int >= 1, default=1
        Threads of the E-step; on a Dask cluster, threads of each task.

    Attributes: ``components_`` (lambda_T), ``topic_word_`` (rows sum to 1), ``sigma_`` and ``sensitivity_``
    (of each release), ``release_``.

    >>> from topicdp.datasets import synthetic_lda
    >>> X = synthetic_lda(100, 40, 3, random_state=0).X
    >>> model = DPVariationalEM(3, epsilon=2.0, unit="document", n_iterations=2, random_state=0).fit(X)
    >>> model.topic_word_.shape, model.release_.report.guarantee
    ((3, 40), 'approx-DP')
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
        store_init(self, locals())

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
        """Fit on a Corpus, a count matrix (``unit="document"``) or a StreamingCorpus read pass by pass (a map-reduce
        over its shards, locally or on the Dask ``client``, in a fixed order: the same seed gives the same topics on a
        cluster). ``ledger``: :meth:`planned_entries` are checked before the data is read and recorded after the fit.
        """
        vocabulary = vocabulary_of(corpus, vocabulary_source)
        entries = self.planned_entries()
        self.sensitivity_, self.sigma_ = entries[0].sensitivity, entries[0].sigma
        if ledger is not None:
            ledger.check(entries)
        sizes = self._run(corpus, client, ledger)
        self.release_ = PrivateRelease(
            topic_word=self.topic_word_, noisy=None, vocabulary=_vocabulary(corpus, self.n_features_in_),
            report=self._report(vocabulary, entries),
            diagnostics={"n_docs": int(sizes["n_docs"]), "n_units": int(sizes["n_units"])})
        if ledger is not None:
            ledger.record(entries)
        return self

    def planned_entries(self) -> list[GaussianEntry]:
        """The ledger entries of the T releases, from the public parameters only (one Gaussian entry with
        ``count=T`` at :meth:`noise_scale`): what ``fit`` checks, records and reports, and what a persisted ledger
        plans before the corpus is read."""
        return [GaussianEntry("dp-vem", self.noise_scale(), neighbour_factor(self.neighbours), self.n_iterations,
                              unit=self.unit, neighbours=self.neighbours)]

    def _report(self, vocabulary: VocabularyStatement, entries: list):
        """The privacy report of the fit's ``entries`` (T Gaussian releases composed exactly: GDP)."""
        T, sigma, D = self.n_iterations, self.sigma_, self.sensitivity_
        published = {
            "topic_word": "post-processing: the last noisy statistic, soft-thresholded and normalised",
            "vocabulary": vocabulary.status,
            **{f"report.{k}": "public: a function of the stated epsilon, delta, T and neighbour relation only"
               for k in ("sensitivity", "sigma", "composition", "composition_total")},
            "report.details.algorithm": "public: the stated parameters",
        }
        notes = [vocabulary.note, "The per-unit weights make the sensitivity independent of how many documents a unit "
                 "has: no document cap is needed for the guarantee."]
        if self.init is not None:
            notes.append("The starting topics were given by the caller and are taken to be public (e.g. fitted on "
                         "a public reference corpus).")
        T_warm, K_warm = self.warmup_schedule()
        details = {"algorithm": {"n_iterations": T, "threshold": self.threshold, "alpha": self.alpha_,
                                 "eta": self.eta_, "start": "random" if self.init is None else "public topics",
                                 "warmup_iterations": T_warm, "warmup_topics": K_warm}}
        own = PrivacyLedger()  # this fit's releases; the totals are the ledger's (exact GDP among them)
        own.record(entries)
        totals = ledger_totals(own, self.delta)
        step = ReportParts(published, notes, details=details, report_fields=dict(
            sensitivity=D, sensitivity_method=SENSITIVITY_METHOD, sigma=sigma,
            calibration="analytic: exact Gaussian profile of the T-fold composition (Balle & Wang 2018; GDP)"))
        return compose_report(
            step, mechanism="dp-vem", guarantee="approx-DP", unit=self.unit, neighbours=self.neighbours,
            epsilon=self.epsilon, delta=self.delta, seeded=self.random_state is not None,
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
    """sigma of each of dp-vem's ``n_iterations`` Gaussian releases of L2 sensitivity
    :func:`topicdp._names.neighbour_factor`, their composition calibrated exactly to (epsilon, delta) (module
    docstring)."""
    return calibrate_gaussian(epsilon, delta, neighbour_factor(neighbours), method="analytic", count=n_iterations)

