"""Adapters for scikit-learn's ``LatentDirichletAllocation`` and ``NMF``."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .base import TopicModelSpec, variational_lda_stability


def _normalise_rows(components: np.ndarray, model: str) -> np.ndarray:
    sums = components.sum(axis=1, keepdims=True)
    if np.any(sums <= 0):
        raise ValueError(f"{model} produced an all-zero topic; lower n_topics")
    return components / sums


class SklearnLDA(TopicModelSpec):
    """scikit-learn ``LatentDirichletAllocation`` (batch variational Bayes by default, ``n_jobs=1``).

    Rows are ``components_`` normalised to sum to 1 (the posterior mean topic-word distributions).

    Parameters
    ----------
    n_topics, random_state : int
        ``n_components`` and ``random_state``.
    init : (K, V) array or None, default=None
        Public starting topics (e.g. :func:`topicdp.variational.public_init` on the reference P): ``components_``
        (lambda) starts at ``init`` scaled to scikit-learn's own starting mass (V per topic: its Gamma(100, 1/100)
        draws have mean 1) instead of those draws. Row k of the result grew from row k of ``init`` and the output
        keeps that order.
    document_start : {"random", "constant"} or None, default=None
        None: ``"constant"`` with ``init``, ``"random"`` without. scikit-learn's training E-step
        (``_update_doc_distribution`` called with the estimator's ``random_state_``) starts every document's gamma at
        Gamma(100, 0.01) draws taken in row order, one (n_samples, K) draw per E-step, so a document's start depends
        on its row and on every E-step before. ``"constant"``: gamma_d starts at 1, the start scikit-learn itself uses
        outside training (``transform``, ``random_init=False``).
    **params
        Further ``LatentDirichletAllocation`` keyword arguments (defaults here: ``learning_method="batch"``;
        ``max_iter=3`` with ``init``, scikit-learn's 10 without).

    Notes
    -----
    With ``init``, ``learning_method="batch"`` and the constant document start, f(D) is: lambda^(0) = V init_k /
    sum(init_k); then ``max_iter`` times (a fixed number: ``evaluate_every=-1``, so no perplexity stop): for every
    document, gamma_d from 1 by scikit-learn's coordinate ascent (at most ``max_doc_update_iter=100`` steps, stopping
    when the mean change is below ``mean_change_tol=0.001``), then lambda = ``topic_word_prior`` + sum_d n_dw phi_dwk
    (batch variational Bayes, Hoffman, Blei & Bach 2010, Algorithm 1); f(D)_k = lambda_k / sum(lambda_k). Only the
    two starts are changed (a subclass overriding ``_init_latent_vars`` and ``_e_step``'s ``random_init``); the
    update equations are scikit-learn's.

    *Why 3 iterations from public topics*: as for :class:`~topicdp.adapters.GensimLDA`'s 2 passes, later iterations
    add more sensitivity than fit when the start was fitted on a public corpus of the same kind. On blogs (user
    level, Lambert-W sizing at gamma 0.2) ``max_iter=3`` sampled Delta_s 0.0019 and released at epsilon 3 topics with
    NPMI 0.88x, contrast 1.27x a non-private LDA's, diversity 0.76, overlap 0.44
    (``benchmarks/stable_starts.py --models sklearn-lda --param max_iter=3``); 10 iterations were not run at that
    sizing (about 90 s a fit).
    """

    name = "sklearn-lda"
    start_param = "init"
    defaults = {"learning_method": "batch", "max_iter": 10}
    native = "sklearn.decomposition:LatentDirichletAllocation"
    own_params = ("init", "document_start")
    reserved = {"n_components": "the number of topics is n_topics",
                "n_jobs": "the fit runs on one job (f must be a deterministic function of the corpus)"}

    def _resolve(self, params: dict) -> dict:
        start = params.pop("document_start", None)
        if start is None:
            start = "constant" if params.get("init") is not None else "random"
        if start not in ("random", "constant"):
            raise ValueError(f"document_start must be 'random', 'constant' or None, got {start!r}")
        base = {**self.defaults, "max_iter": 3} if params.get("init") is not None else self.defaults
        return {**base, **params, "document_start": start}

    def _fit(self, corpus) -> np.ndarray:
        params = dict(self.params)
        init = params.pop("init", None)
        constant = params.pop("document_start") == "constant"
        if init is not None:
            init = np.asarray(init, dtype=np.float64)
            if init.shape != (self.n_topics, corpus.n_words) or init.min() < 0 or np.any(init.sum(axis=1) <= 0):
                raise ValueError(f"init must be a non-negative ({self.n_topics}, {corpus.n_words}) array with "
                                 "positive rows")
        model = _started_lda_class()(n_components=self.n_topics, random_state=self.random_state, n_jobs=1, **params)
        model.public_start_ = init
        model.constant_document_start_ = constant
        model.fit(corpus.X)
        return _normalise_rows(model.components_, "LatentDirichletAllocation")

    def stability(self) -> tuple[bool | None, str]:
        params = self.params
        return variational_lda_stability(
            params, batch=params.get("learning_method") == "batch", order="row order", repeats="iterations",
            online_reason="online learning: an M-step every mini-batch, so removing a unit shifts every later "
                          "batch boundary (learning_method='batch')")


@lru_cache(maxsize=1)
def _started_lda_class():
    """``LatentDirichletAllocation`` with a public topic start and an optional constant document start.

    The attributes ``public_start_`` ((K, V) or None) and ``constant_document_start_`` (bool) are set on the
    instance before ``fit``; ``__init__`` is scikit-learn's, so ``get_params`` and the parameter validation are too.
    """
    from scipy.special import psi
    from sklearn.decomposition import LatentDirichletAllocation

    class StartedLDA(LatentDirichletAllocation):
        public_start_ = None  # (K, V) array or None
        constant_document_start_ = False

        def _init_latent_vars(self, n_features, dtype=np.float64):
            super()._init_latent_vars(n_features, dtype=dtype)
            if self.public_start_ is not None:
                start = self.public_start_ / self.public_start_.sum(axis=1, keepdims=True) * n_features
                self.components_ = start.astype(dtype, copy=False)
                # exp(E[log beta]) as scikit-learn's _init_latent_vars computes it (its Cython helper is private)
                elog = psi(self.components_) - psi(self.components_.sum(axis=1, keepdims=True))
                self.exp_dirichlet_component_ = np.exp(elog).astype(dtype, copy=False)

        def _e_step(self, X, cal_sstats, random_init, parallel=None):
            return super()._e_step(X, cal_sstats, random_init and not self.constant_document_start_,
                                   parallel=parallel)

    return StartedLDA


class SklearnNMF(TopicModelSpec):
    """scikit-learn ``NMF`` on the count matrix (``init="nndsvda"``, deterministic).

    NMF's H rows are non-negative word weights of arbitrary scale (W absorbs it); each row is divided
    by its sum so that topics are on the simplex and comparable across fits. With ``init`` (public starting
    topics, K x V), H starts there (``init="custom"``), W at its non-negative least-squares fit to the counts
    given H (``non_negative_factorization(update_H=False)``), and row k of the result grew from row k of
    ``init``.
    """

    name = "sklearn-nmf"
    start_param = "init_topics"
    defaults = {"init": "nndsvda", "max_iter": 400}
    native = "sklearn.decomposition:NMF"
    own_params = ("init_topics",)
    reserved = {"n_components": "the number of topics is n_topics"}

    def _fit(self, corpus) -> np.ndarray:
        from sklearn.decomposition import NMF, non_negative_factorization

        params = dict(self.params)
        init = params.pop("init_topics", None)
        X = corpus.X.astype(np.float64)
        if init is None:
            model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
            model.fit(X)
            return _normalise_rows(model.components_, "NMF")
        H = np.asarray(init, dtype=np.float64)
        if H.shape != (self.n_topics, X.shape[1]) or H.min() < 0:
            raise ValueError(f"init_topics must be a non-negative ({self.n_topics}, {X.shape[1]}) array")
        H = H / H.sum(axis=1, keepdims=True) * float(X.sum()) / self.n_topics  # the counts' scale
        W, _, _ = non_negative_factorization(X, H=H, n_components=self.n_topics, init="custom", update_H=False,
                                             max_iter=self.params.get("max_iter", 400))
        params["init"] = "custom"
        model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
        model.fit(X, W=np.maximum(W, 1e-10), H=H)
        return _normalise_rows(model.components_, "NMF")

    def stability(self) -> tuple[bool | None, str]:
        # Measured on blog posts at the Lambert-W sizing (the largest of 61 pair distances): from P's topics 0.055
        # against a 90th percentile of 0.003, and with a fixed number of iterations (tol=0, max_iter=30 or 100)
        # still 0.025 and 0.032, each time from a different pair; from nndsvda 1.24.
        if self.params.get("init_topics") is not None:
            return False, ("coordinate descent from public starting topics still moves far for a few neighbouring "
                           "corpora (measured on blog posts; not the stopping rule: a fixed number of iterations "
                           "jumps too); no parameter is known to remove it")
        return False, ("the nndsvda start is an SVD of the data, whose singular vectors can rotate between "
                       "neighbouring corpora where the leading singular values are close; a few neighbouring corpora "
                       "moved it far (measured on blog posts), and no parameter is known to remove it")

