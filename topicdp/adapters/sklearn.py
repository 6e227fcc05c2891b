"""Adapters for scikit-learn's ``LatentDirichletAllocation`` and ``NMF``."""

from __future__ import annotations

from functools import lru_cache
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ..inference.estep import statistic_from_gamma, user_norm_weights
from .._validation import store_init
from .base import COUNT, NON_NEGATIVE, POSITIVE, POSITIVE_INT, UNIT_INTERVAL, TopicModelSpec, variational_lda_stability


def _normalise_rows(components: np.ndarray) -> np.ndarray:
    """The rows of ``components`` as probability vectors; a row the fit left all zero is the uniform topic (refusing
    it would make a release stop on a private fact, how many documents a corpus holds)."""
    sums = components.sum(axis=1, keepdims=True)
    empty = sums[:, 0] <= 0
    if np.any(empty):
        components = components.copy()
        components[empty] = 1.0
        sums = components.sum(axis=1, keepdims=True)
    return components / sums


class SklearnLDA(TopicModelSpec):
    """scikit-learn ``LatentDirichletAllocation`` (batch variational Bayes by default, ``n_jobs=1``); rows are
    ``components_`` normalised to sum to 1.

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
        ``n_components`` (refused under scikit-learn's name) and the seed.
    init : (K, V) array or None, default=None
        Public starting topics: ``components_`` starts at ``init`` scaled to scikit-learn's starting mass (V per
        topic) instead of its Gamma(100, 1/100) draws; row k of the result grew from row k of ``init``.
    document_start : {"random", "constant"} or None, default=None
        None: ``"constant"`` with ``init``. scikit-learn's training E-step starts gamma at Gamma(100, 0.01) draws in
        row order (a document's start depends on its row); ``"constant"`` starts it at 1, as outside training.
    max_iter : int >= 0 or None, default=None
        None: 3 with ``init`` (later iterations from public topics add more sensitivity than fit), 10 without.
    max_user_norm : float > 0 or None, default=None
        A cap c on each user's weight in the M-step's statistic (batch learning only): user u's documents weighted by
        ``min(1, c / ||a_u||_2)`` (a_u their summed counts), and their part S_uk of row k by ``min(1, c K pi_k /
        ||S_uk||_2)`` (pi_k the row's share of mass; :func:`~topicdp.inference.estep.user_topic_weights`).
    learning_method, doc_topic_prior, topic_word_prior, learning_decay, learning_offset, batch_size, evaluate_every, \
total_samples, perp_tol, mean_change_tol, max_doc_update_iter, verbose
        ``LatentDirichletAllocation``'s; ``n_jobs`` is refused (TopicDP's ``n_jobs`` runs neighbour pairs in parallel).

    Notes
    -----
    With ``init``, batch learning and the constant start, f(D) is ``max_iter`` fixed iterations of: gamma_d from 1 by
    scikit-learn's coordinate ascent, then ``lambda = topic_word_prior + sum_d n_dw phi_dwk`` (Hoffman, Blei & Bach
    2010, Alg. 1); only the two starts are changed (a subclass), the update equations are scikit-learn's.
    """

    name = "sklearn-lda"
    start_param = "init"
    refused = {**TopicModelSpec.refused,
               "n_jobs": "the fit runs on one job (f must be a deterministic function of the corpus); TopicDP's "
                         "n_jobs runs neighbour pairs in parallel"}
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        "init": ["array-like", None],
        "document_start": [StrOptions({"random", "constant"}), None],
        "max_iter": [*COUNT, None],
        "max_user_norm": [*POSITIVE, None],
        # the rest as LatentDirichletAllocation states them
        "learning_method": [StrOptions({"batch", "online"})],
        **dict.fromkeys(("doc_topic_prior", "topic_word_prior"), [*UNIT_INTERVAL, None]),
        "learning_decay": UNIT_INTERVAL,
        "learning_offset": [Interval(Real, 1.0, None, closed="left")],
        "batch_size": [Interval(Integral, 0, None, closed="neither")],
        "evaluate_every": [Interval(Integral, None, None, closed="neither")],
        "total_samples": POSITIVE,
        **dict.fromkeys(("perp_tol", "mean_change_tol"), NON_NEGATIVE),
        "max_doc_update_iter": COUNT,
        "verbose": ["verbose"],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init=None, document_start: str | None = None,
                 max_iter: int | None = None, max_user_norm: float | None = None, learning_method: str = "batch",
                 doc_topic_prior: float | None = None, topic_word_prior: float | None = None,
                 learning_decay: float = 0.7, learning_offset: float = 10.0, batch_size: int = 128,
                 evaluate_every: int = -1, total_samples: float = 1e6,
                 perp_tol: float = 0.1, mean_change_tol: float = 1e-3, max_doc_update_iter: int = 100,
                 verbose: int = 0) -> None:
        store_init(self, locals())

    def _resolve(self, params: dict) -> dict:
        has_start = params["init"] is not None
        if params["document_start"] is None:
            params["document_start"] = "constant" if has_start else "random"
        if params["max_iter"] is None:
            params["max_iter"] = 3 if has_start else 10
        if params["max_user_norm"] is not None and params["learning_method"] != "batch":
            raise ValueError("max_user_norm weighs each user's documents in one batch statistic: it needs "
                             f"learning_method='batch', got {params['learning_method']!r}")
        return params

    def _fit(self, corpus) -> np.ndarray:
        params = dict(self.params)
        init = params.pop("init")
        constant = params.pop("document_start") == "constant"
        cap = params.pop("max_user_norm")
        if init is not None:
            init = np.asarray(init, dtype=np.float64)
            if init.shape != (self.n_topics, corpus.n_words) or init.min() < 0 or np.any(init.sum(axis=1) <= 0):
                raise ValueError(f"init must be a non-negative ({self.n_topics}, {corpus.n_words}) array with "
                                 "positive rows")
        model = _started_lda_class()(n_components=self.n_topics, random_state=self.random_state, n_jobs=1, **params)
        model.public_start_ = init
        model.constant_document_start_ = constant
        model.row_weights_ = None if cap is None else user_norm_weights(corpus, cap)
        model.row_users_, model.user_cap_ = corpus.doc_users, cap
        model.fit(corpus.X)
        return _normalise_rows(model.components_)

    def stability(self) -> tuple[bool | None, str]:
        return variational_lda_stability(self.params, learning="learning_method", step="mini-batch", chunk="batch",
                                         order="row order", repeats="iterations")


@lru_cache(maxsize=1)
def _started_lda_class():
    """``LatentDirichletAllocation`` with a public topic start, an optional constant document start and document
    weights in the statistic (attributes set before ``fit``; ``__init__`` is scikit-learn's, so ``get_params`` is)."""
    from scipy.special import psi
    from sklearn.decomposition import LatentDirichletAllocation

    class StartedLDA(LatentDirichletAllocation):
        public_start_ = None  # (K, V) array or None
        constant_document_start_ = False
        row_weights_ = None
        row_users_ = user_cap_ = None

        def _init_latent_vars(self, n_features, dtype=np.float64):
            super()._init_latent_vars(n_features, dtype=dtype)
            if self.public_start_ is not None:
                start = self.public_start_ / self.public_start_.sum(axis=1, keepdims=True) * n_features
                self.components_ = start.astype(dtype, copy=False)
                # exp(E[log beta]) as scikit-learn's _init_latent_vars computes it (its Cython helper is private)
                elog = psi(self.components_) - psi(self.components_.sum(axis=1, keepdims=True))
                self.exp_dirichlet_component_ = np.exp(elog).astype(dtype, copy=False)

        def _e_step(self, X, cal_sstats, random_init, parallel=None):
            random_init = random_init and not self.constant_document_start_
            if not cal_sstats or self.row_weights_ is None:
                return super()._e_step(X, cal_sstats, random_init, parallel=parallel)
            if X.shape[0] != self.row_weights_.size:
                raise ValueError("document weights need batch learning (the statistic of every document at once)")
            doc_topic, _ = super()._e_step(X, False, random_init, parallel=parallel)
            return doc_topic, statistic_from_gamma(X, doc_topic, self.exp_dirichlet_component_, self.row_weights_,
                                                   doc_users=self.row_users_, max_user_norm=self.user_cap_)

    return StartedLDA


class SklearnNMF(TopicModelSpec):
    """scikit-learn ``NMF`` on the count matrix (``init="nndsvda"``, deterministic); H's rows are divided by their sums
    (W absorbs the scale).

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
        ``n_components`` (refused under scikit-learn's name) and the seed.
    init_topics : (K, V) array or None, default=None
        Public starting topics: H starts there (``init="custom"``) and W at its non-negative least-squares fit given
        H; row k of the result grew from row k of ``init_topics``.
    init : {"nndsvda", "nndsvd", "nndsvdar", "random"} or None, default="nndsvda"
        A deterministic start stated once (``"custom"`` is what ``init_topics`` sets).
    max_iter : int >= 1, default=400
        scikit-learn's 200 often stops before ``tol``.
    solver, beta_loss, tol, alpha_W, alpha_H, l1_ratio, verbose, shuffle
        ``NMF``'s, with its defaults.
    """

    name = "sklearn-nmf"
    start_param = "init_topics"
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        "init_topics": ["array-like", None],
        # the rest as NMF states them, but "custom" (it needs W and H at fit time: init_topics)
        "init": [StrOptions({"random", "nndsvd", "nndsvda", "nndsvdar"}), None],
        "max_iter": POSITIVE_INT,
        "solver": [StrOptions({"cd", "mu"})],
        "beta_loss": [StrOptions({"frobenius", "kullback-leibler", "itakura-saito"}), Real],
        **dict.fromkeys(("tol", "alpha_W"), NON_NEGATIVE),
        "alpha_H": [*NON_NEGATIVE, StrOptions({"same"})],
        "l1_ratio": UNIT_INTERVAL,
        "verbose": ["verbose"],
        "shuffle": ["boolean"],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init_topics=None, init: str | None = "nndsvda",
                 max_iter: int = 400, solver: str = "cd", beta_loss: str | float = "frobenius", tol: float = 1e-4,
                 alpha_W: float = 0.0, alpha_H: float | str = "same", l1_ratio: float = 0.0, verbose: int = 0,
                 shuffle: bool = False) -> None:
        store_init(self, locals())

    def _fit(self, corpus) -> np.ndarray:
        from sklearn.decomposition import NMF, non_negative_factorization

        params = dict(self.params)
        init = params.pop("init_topics")
        X = corpus.X.astype(np.float64)
        if init is None and str(params.get("init")).startswith("nndsvd") and X.shape[0] < self.n_topics:
            # NNDSVD needs at least K rows; empty documents change no topic (their rows of W stay 0), so f is the
            # same NMF on X padded with empty rows, defined on every corpus (how many documents it holds is private)
            X = sp.vstack([X, sp.csr_matrix((self.n_topics - X.shape[0], X.shape[1]))], format="csr")
        start = {}
        if init is not None:
            H = np.asarray(init, dtype=np.float64)
            if H.shape != (self.n_topics, X.shape[1]) or H.min() < 0:
                raise ValueError(f"init_topics must be a non-negative ({self.n_topics}, {X.shape[1]}) array")
            H = H / H.sum(axis=1, keepdims=True) * float(X.sum()) / self.n_topics  # the counts' scale
            W, _, _ = non_negative_factorization(X, H=H, n_components=self.n_topics, init="custom", update_H=False,
                                                 max_iter=params["max_iter"])
            params["init"], start = "custom", {"W": np.maximum(W, 1e-10), "H": H}
        model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
        with np.errstate(invalid="ignore"):  # an exact fit (e.g. one document) rounds its loss below 0 in a sqrt
            model.fit(X, **start)
        return _normalise_rows(model.components_)

    def stability(self) -> tuple[bool | None, str]:
        if self.params["init_topics"] is not None:
            return False, ("coordinate descent from public starting topics still moves far for a few neighbouring "
                           "corpora (not the stopping rule: a fixed number of iterations jumps too); no parameter is "
                           "known to remove it")
        return False, ("the nndsvda start is an SVD of the data, whose singular vectors can rotate between "
                       "neighbouring corpora where the leading singular values are close; a few neighbouring corpora "
                       "moved it far, and no parameter is known to remove it")
