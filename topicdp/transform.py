"""Document-topic proportions of new documents, folded into a released topic-word matrix.

Folding in (Blei, Ng & Jordan 2003, "Latent Dirichlet allocation", Eqs. 6-7, topics held fixed, as gensim's
``LdaModel.inference`` and scikit-learn's ``transform`` do) runs the estimators' own per-document E-step
(:func:`topicdp.inference.infer_theta`). Post-processing of the release: only the documents passed in are read,
so the guarantee is unchanged (and says nothing about the new documents).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import check_count_matrix
from .corpus import split_corpus
from .inference import heldout_perplexity, infer_theta


def fold_in(topic_word: np.ndarray, X, *, alpha=None, vocabulary: tuple | None = None,
            who: str = "the release") -> np.ndarray:
    """Topic proportions theta (n_docs x K, rows sum to 1) of the documents ``X`` under fixed topics ``topic_word``.

    ``X`` is a Corpus with exactly ``vocabulary`` (build it with ``vocabulary=release.vocabulary``) or a count matrix
    in the release's column order; ``alpha`` the Dirichlet prior on theta (default 1/K); ``who`` is named in errors.
    """
    n_words = topic_word.shape[1]
    X = check_count_matrix(_counts(X, vocabulary, n_words, who), n_words=n_words, expected_by=who)
    return infer_theta(topic_word, X, alpha=alpha)


def _counts(X, vocabulary: tuple | None, n_words: int, who: str):
    """The count matrix of a Corpus (checked against ``vocabulary``) or of a matrix."""
    counts, _, words = split_corpus(X)
    if words is not None and vocabulary is not None and words != tuple(vocabulary):
        raise ValueError(f"the corpus' vocabulary ({len(words)} words) differs from {who}'s ({n_words} "
                         "words, or the same words in another order); build the corpus with "
                         "vocabulary=release.vocabulary")
    return counts


class FoldInMixin(TransformerMixin):
    """``transform(X)``: document-topic proportions of new documents under the fitted ``topic_word_``, with the
    estimator's ``alpha_`` as prior (post-processing of the released topics).
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts (documents x words)
        tags.input_tags.sparse = True
        return tags

    def transform(self, X) -> np.ndarray:
        """Topic proportions (n_docs x K, rows sum to 1) of ``X``, a Corpus or a count matrix with the fitted
        vocabulary's columns; the released topics are held fixed (variational fold-in)."""
        check_is_fitted(self, "topic_word_")
        return fold_in(self.topic_word_, X, alpha=getattr(self, "alpha_", None), vocabulary=self._fitted_vocabulary(),
                       who=type(self).__name__)

    def score(self, X, y=None) -> float:
        """Minus the log held-out perplexity per word of ``X`` under the released topics (higher is better).

        Document completion (:func:`topicdp.inference.heldout_perplexity`, split seeded with 0), what ``GridSearchCV``
        maximises without ``scoring=``. Every fit of a search over *private* data is a release of its training fold and
        their budgets compose: search on public or generated data, then fit once on the private corpus.
        """
        check_is_fitted(self, "topic_word_")
        n_words, who = self.topic_word_.shape[1], type(self).__name__
        counts = check_count_matrix(_counts(X, self._fitted_vocabulary(), n_words, who),
                                    min_docs=0, n_words=n_words, expected_by=who, integral=True)
        return -math.log(heldout_perplexity(self.topic_word_, counts, alpha=getattr(self, "alpha_", None),
                                            random_state=0))

    def _fitted_vocabulary(self) -> tuple | None:
        """The columns' words a Corpus is checked against: the release's, or the fitted ``vocabulary_``; None if unknown."""
        release = getattr(self, "release_", None)
        return release.vocabulary if release is not None else getattr(self, "vocabulary_", None)
