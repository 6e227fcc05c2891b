"""Synthetic LDA corpora with ground truth, and the embedded default corpus.

Synthetic corpora follow the generative model of LDA (Blei et al. 2003) as used in the experiments of
the spectral paper (``000_*``, Sec. 7 / App. J): topics mu_j ~ Dirichlet(beta) over the vocabulary,
document proportions theta_n ~ Dirichlet(alpha), lengths L_n ~ Poisson(mean_length), and each token's
topic ~ theta_n, word ~ mu_topic. A small ``beta`` gives the paper's "bursty" topics, in which a few
words carry most of a topic's mass; ``bursty=True`` additionally plants one dominant word per topic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._validation import check_int, check_random_state, check_real


@dataclass
class SyntheticLDA:
    """A synthetic corpus and the parameters that generated it.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix, shape (n_docs, n_words)
        Document-term counts (int64).
    topic_word : ndarray, shape (n_topics, n_words)
        Ground-truth topics mu (rows on the simplex).
    alpha : ndarray, shape (n_topics,)
        Ground-truth Dirichlet parameter; ``alpha.sum()`` is alpha0.
    """

    X: sp.csr_matrix
    topic_word: np.ndarray
    alpha: np.ndarray

    @property
    def alpha0(self) -> float:
        return float(self.alpha.sum())


def synthetic_lda(
    n_docs: int,
    n_words: int,
    n_topics: int,
    *,
    alpha0: float = 1.0,
    alpha: np.ndarray | None = None,
    beta: float = 0.1,
    bursty: bool = False,
    mean_length: float = 100.0,
    random_state=None,
    chunk_size: int = 50_000,
) -> SyntheticLDA:
    """Draw a corpus from LDA.

    Parameters
    ----------
    n_docs, n_words, n_topics : int
        N, d (vocabulary size) and k.
    alpha0 : float, default=1.0
        Sum of the Dirichlet parameter; the symmetric ``alpha = alpha0 / k`` is used unless ``alpha``
        is given.
    alpha : array of shape (n_topics,), optional
        An explicit (possibly asymmetric) Dirichlet parameter; overrides ``alpha0``.
    beta : float, default=0.1
        Symmetric Dirichlet parameter of the topics over the vocabulary.
    bursty : bool, default=False
        Plant in each topic one distinct word that carries about half of the topic's mass.
    mean_length : float, default=100
        Mean of the Poisson document lengths.
    random_state : None, int or numpy Generator
    chunk_size : int
        Documents generated at once (bounds memory for very large N).

    Returns
    -------
    SyntheticLDA
    """
    n_docs = check_int(n_docs, "n_docs", low=1)
    n_words = check_int(n_words, "n_words", low=2)
    n_topics = check_int(n_topics, "n_topics", low=1, high=n_words)
    beta = check_real(beta, "beta", low=0.0)
    mean_length = check_real(mean_length, "mean_length", low=0.0)
    rng = check_random_state(random_state)
    if alpha is None:
        alpha0 = check_real(alpha0, "alpha0", low=0.0)
        alpha = np.full(n_topics, alpha0 / n_topics)
    else:
        alpha = np.asarray(alpha, dtype=float)
        if alpha.shape != (n_topics,) or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
            raise ValueError(f"alpha must be a positive finite array of shape ({n_topics},)")

    topic_word = rng.dirichlet(np.full(n_words, beta), size=n_topics)
    if bursty:
        planted = rng.choice(n_words, size=n_topics, replace=False)
        topic_word *= 0.5
        topic_word[np.arange(n_topics), planted] += 0.5

    blocks = [
        _draw_documents(min(chunk_size, n_docs - start), topic_word, alpha, mean_length, rng)
        for start in range(0, n_docs, chunk_size)
    ]
    X = sp.vstack(blocks, format="csr")
    return SyntheticLDA(X=X, topic_word=topic_word, alpha=alpha)


def _draw_documents(n: int, topic_word, alpha, mean_length, rng) -> sp.csr_matrix:
    """Token topics per document by a vectorised multinomial, then words topic by topic."""
    k, d = topic_word.shape
    theta = rng.dirichlet(alpha, size=n)
    lengths = rng.poisson(mean_length, size=n)
    topic_counts = rng.multinomial(lengths, theta)  # (n, k)
    rows, cols = [], []
    for j in range(k):
        per_doc = topic_counts[:, j]
        total = int(per_doc.sum())
        if total == 0:
            continue
        rows.append(np.repeat(np.arange(n, dtype=np.int64), per_doc))
        cols.append(rng.choice(d, size=total, p=topic_word[j]))
    if not rows:
        return sp.csr_matrix((n, d), dtype=np.int64)
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    return X
