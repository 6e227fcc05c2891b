"""Per-user weighting for any wrapped model: f(D) = the model's f on D with every user's counts scaled to one mass.

A wrapped LDA weighs users by their volume, so the sampled sensitivity (the largest of the sampled pair distances
under the Lambert-W sizing) is set by the largest users a pair can draw. Scaling each user's counts to the same
``mass`` bounds every user's share of the statistics, as :class:`topicdp.variational.DPVariationalLDA`'s per-unit
weights do for dp-vem; the model then fits fractional counts (gensim and scikit-learn take them). The weights are
a function of the data, so they are part of f: sensitivity sampling measures f with them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .base import TopicModelSpec


class UserWeightedCorpus:
    """A read-only view of a corpus with each user's counts scaled to ``mass`` tokens (fractional counts).

    It has what the adapters read: ``X`` (float), ``vocabulary``, ``doc_users``, ``n_docs``, ``n_words`` and
    ``to_gensim()``.
    """

    def __init__(self, corpus, mass: float) -> None:
        self.vocabulary = tuple(corpus.vocabulary)
        self.doc_users = np.asarray(corpus.doc_users)
        tokens = np.asarray(corpus.X.sum(axis=1), dtype=np.float64).ravel()
        _, user_of_doc = np.unique(self.doc_users, return_inverse=True)
        per_user = np.bincount(user_of_doc, weights=tokens)
        self.X = sp.csr_matrix(sp.diags(mass / per_user[user_of_doc]) @ corpus.X.astype(np.float64))
        self.n_docs, self.n_words = self.X.shape

    def to_gensim(self):
        """``(gensim Dictionary, bag-of-words with fractional counts)``, ids equal to column indices."""
        from gensim.corpora import Dictionary

        dictionary = Dictionary()
        dictionary.token2id = {w: i for i, w in enumerate(self.vocabulary)}
        dictionary.id2token = dict(enumerate(self.vocabulary))
        X = self.X
        bow = [list(zip(X.indices[X.indptr[d]:X.indptr[d + 1]].tolist(), X.data[X.indptr[d]:X.indptr[d + 1]].tolist()))
               for d in range(self.n_docs)]
        return dictionary, bow


class UserWeighted(TopicModelSpec):
    """f(D) = ``model``'s f on D with every user's counts scaled to ``mass`` tokens (:class:`UserWeightedCorpus`).

    Parameters
    ----------
    model : TopicModelSpec
        The wrapped model (e.g. ``GensimLDA(10, init=public_init(reference, 10))``); its output order is kept.
    mass : float > 0, default=1000
        The tokens every user counts for. On the scale of a typical user's volume it keeps the model's priors
        (alpha, eta) in the regime they were chosen for.
    """

    name = "user-weighted"

    def __init__(self, model: TopicModelSpec, mass: float = 1000.0) -> None:
        # only the two parameters are stored (scikit-learn's convention); K and the seed are the wrapped model's
        self.model = model
        self.mass = mass

    @property
    def n_topics(self) -> int:  # type: ignore[override]
        return self.model.n_topics

    @property
    def random_state(self) -> int:  # type: ignore[override]
        return self.model.random_state

    @property
    def params(self) -> dict:
        return {"mass": self.mass}

    def get_params(self, deep: bool = True) -> dict:
        params = {"model": self.model, "mass": self.mass}
        if deep and hasattr(self.model, "get_params"):
            params.update({f"model__{k}": v for k, v in self.model.get_params().items()})
        return params

    def set_params(self, **params) -> "UserWeighted":
        return BaseEstimator.set_params(self, **params)  # nested model__ parameters go to the wrapped model

    def __repr__(self) -> str:
        return f"UserWeighted({self.model!r}, mass={self.mass!r})"

    def _checked(self) -> TopicModelSpec:
        from .._validation import check_real

        if not isinstance(self.model, TopicModelSpec):
            raise TypeError(f"model must be a TopicModelSpec, got {type(self.model).__name__}")
        check_real(self.mass, "mass", low=0.0)
        return self.model

    def fit_topic_word(self, corpus) -> np.ndarray:
        return self._checked().fit_topic_word(UserWeightedCorpus(corpus, float(self.mass)))

    def _fit(self, corpus) -> np.ndarray:  # fit_topic_word is overridden: the wrapped model orders its rows
        raise NotImplementedError

    def stability(self) -> tuple[bool | None, str]:
        expected, reason = self._checked().stability()
        return expected, f"{reason}; every user's counts scaled to {self.mass:g} tokens"

    def describe(self) -> dict:
        expected, reason = self.stability()
        return {"model": self.name, "mass": float(self.mass), "wrapped": self._checked().describe(),
                "n_topics": self.model.n_topics, "stability": {"expected": expected, "reason": reason}}
