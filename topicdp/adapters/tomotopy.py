"""Adapter for tomotopy's ``LDAModel`` (collapsed Gibbs sampling), an optional extra (``topicdp[tomotopy]``), not
in the ``topicdp`` command's registry. A seeded run with one worker is bit-identical across runs.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._validation import store_init
from .base import COUNT, POSITIVE, POSITIVE_INT, TopicModelSpec


class TomotopyLDA(TopicModelSpec):
    """tomotopy ``LDAModel``: collapsed Gibbs sampling LDA (Griffiths & Steyvers 2004) as f: Corpus -> K x V.

    Documents are added in corpus order (each word repeated by its count); row k is ``get_topic_word_dist(k)`` at the
    corpus' columns, 0 for words the model does not use.

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
        ``k`` and ``seed`` (refused under tomotopy's names).
    iterations : int >= 1, default=200
        Gibbs sweeps (a fixed number).
    optim_interval : int >= 0, default=0
        0 keeps the stated priors fixed (tomotopy optimises alpha every 10 sweeps by default).
    workers : int, default=1
        Must be 1 (tomotopy warns that several workers may differ between runs).
    alpha, eta, tw, min_cf, min_df, rm_top, burn_in
        tomotopy's (``tw`` its term weighting; words cut by ``min_cf``, ``min_df`` or ``rm_top`` get a 0 column).
    """

    name = "tomotopy-lda"
    refused = {**TopicModelSpec.refused, "k": "the number of topics is n_topics", "seed": "the seed is random_state"}
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        **dict.fromkeys(("iterations", "workers"), POSITIVE_INT),
        **dict.fromkeys(("alpha", "eta"), POSITIVE),
        **dict.fromkeys(("optim_interval", "min_cf", "min_df", "rm_top", "burn_in"), COUNT),
        "tw": [StrOptions({"one", "idf", "pmi"})],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, iterations: int = 200, alpha: float = 0.1,
                 eta: float = 0.01, optim_interval: int = 0, workers: int = 1, tw: str = "one", min_cf: int = 0,
                 min_df: int = 0, rm_top: int = 0, burn_in: int = 0) -> None:
        store_init(self, locals())

    def _resolve(self, params: dict) -> dict:
        if params["workers"] != 1:
            raise ValueError("workers must be 1: tomotopy's result is not reproducible with several workers, which "
                             "sensitivity sampling requires; use n_jobs of TopicDP to run neighbour pairs in parallel")
        return params

    def _fit(self, corpus) -> np.ndarray:
        from .._extras import require

        require("tomotopy", extra="tomotopy", purpose="the tomotopy-lda adapter")
        import tomotopy as tp

        p = self.params
        model = tp.LDAModel(tw=p["tw"], min_cf=p["min_cf"], min_df=p["min_df"], rm_top=p["rm_top"], k=self.n_topics,
                            alpha=p["alpha"], eta=p["eta"], seed=self.random_state)
        model.optim_interval = p["optim_interval"]
        model.burn_in = p["burn_in"]
        X = corpus.X.tocsr()
        vocabulary = list(corpus.vocabulary)
        for d in range(X.shape[0]):
            start, end = X.indptr[d], X.indptr[d + 1]
            words = [vocabulary[j] for j, n in zip(X.indices[start:end], X.data[start:end]) for _ in range(int(n))]
            if words:
                model.add_doc(words)
        model.train(p["iterations"], workers=1)
        columns = {w: j for j, w in enumerate(vocabulary)}
        used = np.array([columns[w] for w in model.used_vocabs], dtype=np.intp)
        W = np.zeros((self.n_topics, len(vocabulary)))
        for k in range(self.n_topics):
            W[k, used] = model.get_topic_word_dist(k)
        if not used.size:
            raise ValueError(f"tomotopy kept no word of the corpus (min_cf={p['min_cf']}, min_df={p['min_df']}, "
                             f"rm_top={p['rm_top']}): lower them so that some words remain")
        return W / W.sum(axis=1, keepdims=True)

    def stability(self) -> tuple[bool | None, str]:
        return False, ("collapsed Gibbs sampling: the output is one sample of a chain whose seeded random stream is "
                       "consumed token by token in corpus order, so removing a unit changes every later draw")
