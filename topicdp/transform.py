"""Document-topic proportions of new documents, folded into a released topic-word matrix.

Folding in (Blei, Ng & Jordan 2003, "Latent Dirichlet allocation", Eqs. 6-7, with the topics held fixed, as
gensim's ``LdaModel.inference`` and scikit-learn's ``LatentDirichletAllocation.transform`` do) runs the
per-document variational E-step against the released topics; it is the same iteration the estimators fit
with (:func:`topicdp.inference.estep.document_gamma`, through :func:`topicdp.inference.infer_theta`).

Privacy: this is post-processing of the released matrix. It reads only the documents passed in, which are
the caller's own data; the private corpus is not touched, so the guarantee of the release is unchanged
(and says nothing about the new documents).
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
    """Topic proportions theta (n_docs x K) of the documents ``X`` under fixed topics ``topic_word``.

    Parameters
    ----------
    topic_word : (K, V) array
        Released topics (rows on the simplex).
    X : topicdp.Corpus or (n_docs, V) count matrix (dense or sparse)
        A Corpus must have exactly ``vocabulary`` (same words, same order: build it with
        ``vocabulary=release.vocabulary``); a matrix must have V columns in the release's column order.
    alpha : float or (K,) array, optional
        Dirichlet prior on theta; default 1/K.
    vocabulary : tuple of str, optional
        The release's column labels (checked against a Corpus' vocabulary).
    who : str
        Named in the error messages.

    Returns
    -------
    theta : (n_docs, K) array, rows sum to 1.
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
    """``transform(X)``: document-topic proportions of new documents under the fitted ``topic_word_``.

    Post-processing of the released topics (see :mod:`topicdp.transform`); the prior is the estimator's
    ``alpha_`` (its fitted or stated Dirichlet parameter). ``fit_transform`` fits, then folds the training
    documents into the released topics.
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

        Document completion (:func:`topicdp.inference.heldout_perplexity`, token split seeded with 0): half of
        each document's tokens are folded in, the other half scored; so ``X`` must hold integer counts. This is what ``GridSearchCV`` maximises
        without ``scoring=``. Post-processing of the release, like :meth:`transform`; but note that every fit
        of a search over *private* data is a release of its training fold, and their budgets compose: search
        on public or generated data, then fit once on the private corpus.
        """
        check_is_fitted(self, "topic_word_")
        n_words, who = self.topic_word_.shape[1], type(self).__name__
        counts = check_count_matrix(_counts(X, self._fitted_vocabulary(), n_words, who),
                                    min_docs=0, n_words=n_words, expected_by=who, integral=True)
        return -math.log(heldout_perplexity(self.topic_word_, counts, alpha=getattr(self, "alpha_", None),
                                            random_state=0))

    def _fitted_vocabulary(self) -> tuple | None:
        """The columns' words a Corpus is checked against: the release's (private estimators) or the fitted
        ``vocabulary_`` (non-private ones, which publish no release); None when neither is known."""
        release = getattr(self, "release_", None)
        return release.vocabulary if release is not None else getattr(self, "vocabulary_", None)
