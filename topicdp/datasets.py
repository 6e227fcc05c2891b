"""Synthetic LDA corpora with ground truth (Blei et al. 2003), and the generated demo corpus of ten themes.

As in the spectral paper's experiments (DeCarolis et al. 2020, Sec. 7, App. J): topics ``mu_j ~ Dirichlet(beta)``,
proportions ``theta_n ~ Dirichlet(alpha)``, lengths ``~ Poisson(mean_length)``; alpha symmetric ``alpha0 / k``,
explicit, or ``alpha0 * Dirichlet(alpha_concentration 1_k)``; bursty topics by a small ``beta`` or by planting one
word of mass ``bursty_mass`` in ``n_bursty`` topics (``mu_j <- (1 - m) mu_j + m e_{w_j}``); or explicit ``topic_word``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._validation import check_int, check_random_state, check_real
from .corpus import Corpus


@dataclass
class SyntheticLDA:
    """A synthetic corpus (``X``, int64 counts) and the ground truth that generated it (``topic_word``, ``alpha``)."""

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
    alpha_concentration: float | None = None,
    bursty_mass: float = 0.5,
    n_bursty: int | None = None,
    topic_word: np.ndarray | None = None,
) -> SyntheticLDA:
    """Draw ``n_docs`` documents on ``n_words`` words from LDA with ``n_topics`` topics (module docstring): ``alpha``
    overrides ``alpha0`` (not with ``alpha_concentration``), ``topic_word`` ``beta`` and the planting; ``chunk_size``
    documents are generated at once (bounding memory)."""
    n_docs = check_int(n_docs, "n_docs", low=1)
    n_words = check_int(n_words, "n_words", low=2)
    n_topics = check_int(n_topics, "n_topics", low=1, high=n_words)
    beta = check_real(beta, "beta", low=0.0)
    mean_length = check_real(mean_length, "mean_length", low=0.0)
    rng = check_random_state(random_state)
    if alpha is not None and alpha_concentration is not None:
        raise ValueError("alpha and alpha_concentration cannot both be given")
    if alpha is None and alpha_concentration is None:
        alpha = np.full(n_topics, check_real(alpha0, "alpha0", low=0.0) / n_topics)
    elif alpha is None:  # alpha0 * Dirichlet(concentration 1_k): a random asymmetric alpha
        alpha0 = check_real(alpha0, "alpha0", low=0.0)
        weights = rng.dirichlet(np.full(n_topics, check_real(alpha_concentration, "alpha_concentration", low=0.0)))
        # a Dirichlet draw can underflow to exact zeros for tiny concentrations; alpha must stay positive
        weights = np.maximum(weights, 1e-12)
        alpha = alpha0 * weights / weights.sum()
    else:
        alpha = np.asarray(alpha, dtype=float)
        if alpha.shape != (n_topics,) or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
            raise ValueError(f"alpha must be a positive finite array of shape ({n_topics},)")

    if topic_word is None:  # mu_j ~ Dirichlet(beta 1_d); optionally one word of mass bursty_mass in n_bursty topics
        topic_word = rng.dirichlet(np.full(n_words, beta), size=n_topics)
        if bursty:
            mass = check_real(bursty_mass, "bursty_mass", low=0.0, high=1.0)
            n_b = n_topics if n_bursty is None else check_int(n_bursty, "n_bursty", low=1, high=n_topics)
            planted = rng.choice(n_words, size=n_b, replace=False)
            topic_word[:n_b] *= 1.0 - mass
            topic_word[np.arange(n_b), planted] += mass
    else:
        mu = np.array(topic_word, dtype=float)
        if mu.shape != (n_topics, n_words) or not np.all(np.isfinite(mu)) or np.any(mu < 0):
            raise ValueError(f"topic_word must be a non-negative finite array of shape ({n_topics}, {n_words})")
        if not np.allclose(mu.sum(axis=1), 1.0, atol=1e-8):
            raise ValueError("topic_word rows must sum to 1 (each topic is a distribution over words)")
        topic_word = mu / mu.sum(axis=1, keepdims=True)
    blocks = [_draw_documents(min(chunk_size, n_docs - start), topic_word, alpha, mean_length, rng)
              for start in range(0, n_docs, chunk_size)]
    return SyntheticLDA(X=sp.vstack(blocks, format="csr"), topic_word=topic_word, alpha=alpha)


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
    row_ids, col_ids = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix((np.ones(row_ids.size, dtype=np.int64), (row_ids, col_ids)), shape=(n, d))
    X.sum_duplicates()
    return X


#: Ten themes of real English words, for a generated corpus whose topics a reader can recognise.
THEMES = {
    "football": "match goal team league coach player season striker referee stadium penalty fans club cup "
                "midfield defender keeper transfer score injury",
    "cooking": "recipe oven garlic onion butter flour sugar bake salt pepper sauce pasta chicken soup dough "
               "kitchen roast olive cheese chop",
    "markets": "shares stock investors market prices bank profit trading bonds interest rates fund earnings "
               "dollar inflation economy growth quarter revenue debt",
    "weather": "rain storm wind temperature forecast snow cloud sunny flood thunder heat cold frost humidity "
               "degrees showers drought hurricane breeze climate",
    "music": "band album song guitar concert singer drums tour lyrics chorus record studio melody piano stage "
             "fans bass vocals festival track",
    "health": "doctor patients hospital treatment disease nurse symptoms vaccine clinic medicine surgery "
              "therapy diagnosis infection blood heart cancer health diet sleep",
    "software": "code software bug server database release users python compile function debug version "
                "linux network install update script memory cloud api",
    "travel": "flight hotel airport beach trip tourists passport luggage train holiday island museum tour map "
              "booking cruise guide city visit ticket",
    "politics": "election vote party minister government parliament campaign policy senate president law "
                "reform debate voters tax coalition leader opposition bill budget",
    "gardening": "garden plants seeds soil flowers roses tomatoes compost water grow leaves weeds pots "
                 "spring bloom hedge lawn harvest shrubs bulbs",
}


def themed_vocabulary() -> tuple[str, ...]:
    """The public word list of :func:`themed_corpus`: every word of :data:`THEMES`, sorted."""
    return tuple(sorted({w for words in THEMES.values() for w in words.split()}))


def themed_corpus(n_users: int = 2000, docs_per_user: int = 5, mean_length: float = 40.0, *,
                  alpha0: float = 0.3, random_state=0):
    """``(corpus, truth)``: a user-grouped LDA corpus (symmetric ``alpha0 / 10``) with ten known topics, each a Zipf(1)
    profile over a theme of :data:`THEMES` plus 20% of the mass over all words (the demo's data)."""
    rng = np.random.default_rng(random_state)
    themes = [words.split() for words in THEMES.values()]
    vocabulary = list(themed_vocabulary())
    index = {w: i for i, w in enumerate(vocabulary)}
    truth = np.full((len(themes), len(vocabulary)), 0.2 / len(vocabulary))
    for k, words in enumerate(themes):
        profile = 1.0 / np.arange(1, len(words) + 1)
        truth[k, [index[w] for w in words]] += 0.8 * profile / profile.sum()
    data = synthetic_lda(n_users * docs_per_user, len(vocabulary), len(themes), alpha0=alpha0,
                         mean_length=mean_length, topic_word=truth, random_state=rng)
    users = np.repeat(np.arange(n_users), docs_per_user)
    keep = np.asarray(data.X.sum(axis=1)).ravel() > 0
    # the words are the themes' fixed list, not drawn from the data: public
    corpus = Corpus(X=data.X[keep], vocabulary=tuple(vocabulary), doc_users=np.unique(users[keep], return_inverse=True)[1],
                    vocabulary_source="public")
    return corpus, truth
