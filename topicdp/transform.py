"""Document-topic proportions of new documents folded into a released topic-word matrix (Blei, Ng & Jordan 2003,
Eqs. 6-7, topics fixed, as gensim and scikit-learn do) by the estimators' own E-step
(:func:`topicdp.inference.infer_theta`): post-processing, reading only the documents passed in.
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
    """Topic proportions theta (n_docs x K) of ``X`` (a Corpus on exactly ``vocabulary``, or a count matrix in its
    column order) under fixed ``topic_word``, with the Dirichlet prior ``alpha`` (default 1/K); errors name ``who``."""
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
    """``transform`` and ``score`` under the fitted ``topic_word_`` and ``alpha_`` (post-processing)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts (documents x words)
        tags.input_tags.sparse = True
        return tags

    def transform(self, X) -> np.ndarray:
        """Topic proportions of ``X``, a Corpus or a count matrix on the fitted columns (:func:`fold_in`)."""
        check_is_fitted(self, "topic_word_")
        return fold_in(self.topic_word_, X, alpha=getattr(self, "alpha_", None), vocabulary=self._fitted_vocabulary(),
                       who=type(self).__name__)

    def score(self, X, y=None) -> float:
        """Minus the log held-out perplexity per word of ``X`` (document completion, split seed 0): ``GridSearchCV``
        maximises it. Each fit of a search over *private* data is a release of its fold, their budgets composing:
        search on public or generated data, then fit once on the private corpus."""
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
