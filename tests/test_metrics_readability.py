"""Readability measures: closed forms on hand-made corpora, and the properties the targets ask for."""

import math
import time

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp import Corpus
from topicdp.datasets import synthetic_lda
from topicdp.metrics import (
    heldout_npmi,
    heldout_user_mask,
    npmi_contrast,
    readability,
    split_users,
    top_words_matrix,
    topic_diversity,
    topic_overlap,
)

VOCAB = ["a", "b", "c", "z"]
# documents {a,b}, {a,b}, {a,c}, {c}; 'z' never occurs
DOCS = np.array([[1, 1, 0, 0], [2, 1, 0, 0], [1, 0, 3, 0], [0, 0, 1, 0]])
N_AB = math.log((2 / 4) / ((3 / 4) * (2 / 4))) / -math.log(2 / 4)  # P(a)=3/4, P(b)=2/4, P(a,b)=2/4
N_AC = math.log((1 / 4) / ((3 / 4) * (2 / 4))) / -math.log(1 / 4)  # P(c)=2/4, P(a,c)=1/4
# NPMI(b, c) = -1 (never together); every pair with z = -1 (never seen)


def lists(*topics, vocab=VOCAB):
    return top_words_matrix([[vocab.index(w) for w in t] for t in topics], len(vocab))


def test_npmi_closed_form():
    W = lists(["a", "b"], ["a", "c"], ["b", "c"], ["c", "z"])
    per = heldout_npmi(W, DOCS, top_n=2, per_topic=True)
    np.testing.assert_allclose(per, [N_AB, N_AC, -1.0, -1.0], atol=1e-12)
    assert heldout_npmi(W, DOCS, top_n=2) == pytest.approx(np.mean([N_AB, N_AC, -1, -1]))


def test_npmi_of_three_words_is_the_mean_over_pairs():
    W = lists(["a", "b", "c"])
    assert heldout_npmi(W, DOCS, top_n=3) == pytest.approx((N_AB + N_AC - 1.0) / 3)


def test_words_in_every_document_score_one():
    X = np.array([[1, 1, 0], [1, 2, 1], [3, 1, 0]])
    assert heldout_npmi(np.array([[0.5, 0.4, 0.1]]), X, top_n=2) == pytest.approx(1.0)


def test_contrast_closed_form():
    W = lists(["a", "b"], ["c", "z"])
    within = np.array([N_AB, -1.0])
    across = (N_AC - 1.0 - 1.0 - 1.0) / 4  # (a,c), (a,z), (b,c), (b,z)
    assert npmi_contrast(W, DOCS, top_n=2) == pytest.approx(within.mean() - across)
    # per topic: the topic's within minus the mean over its words' pairs with the other topic's words
    np.testing.assert_allclose(npmi_contrast(W, DOCS, top_n=2, per_topic=True), within - across)


def test_shared_word_is_not_paired_with_itself():
    # topics {a,b} and {a,c} share 'a': across pairs are (a,c), (b,a), (b,c) -- not (a,a)
    W = lists(["a", "b"], ["a", "c"])
    across = (N_AC + N_AB - 1.0) / 3
    assert npmi_contrast(W, DOCS, top_n=2) == pytest.approx((N_AB + N_AC) / 2 - across)


def test_corpus_heldout_is_matched_by_word():
    # a held-out Corpus with its columns in another order (and without 'z') gives the same values
    order = [2, 0, 1]  # c, a, b
    corpus = Corpus.from_matrix(DOCS[:, order], [VOCAB[j] for j in order])
    W = lists(["a", "b"], ["c", "z"])
    assert readability(W, VOCAB, corpus, top_n=2)["npmi"] == pytest.approx((N_AB - 1.0) / 2)
    assert readability(W, VOCAB, corpus, top_n=2)["unseen_top_words"] == 1
    assert heldout_npmi(W, sp.csr_matrix(DOCS), top_n=2) == pytest.approx((N_AB - 1.0) / 2)
    # without a vocabulary, a Corpus' own columns are the topics' columns
    three = Corpus.from_matrix(DOCS[:, :3], VOCAB[:3])
    assert heldout_npmi(W, three, VOCAB, top_n=2) == pytest.approx((N_AB - 1) / 2)
    assert heldout_npmi(lists(["a", "b"], ["a", "c"])[:, :3], three, top_n=2) == pytest.approx((N_AB + N_AC) / 2)


def test_diversity_closed_form():
    assert topic_diversity(lists(["a", "b"], ["a", "c"]), top_n=2) == pytest.approx(3 / 4)
    assert topic_diversity(lists(["a", "b"], ["c", "z"]), top_n=2) == 1.0


def test_overlap_closed_form_and_matching():
    V = 30
    A = top_words_matrix([[0, 1, 2], [3, 4, 5]], V)
    B = top_words_matrix([[3, 4, 9], [0, 10, 11], [20, 21, 22]], V)
    # best matching: A0-B1 (1 word), A1-B0 (2 words); the third reference topic stays unmatched
    assert topic_overlap(A, B, top_n=3) == pytest.approx((1 / 3 + 2 / 3) / 2)
    np.testing.assert_allclose(topic_overlap(A, B, top_n=3, per_topic=True), [1 / 3, 2 / 3])
    assert topic_overlap(B, A, top_n=3, per_topic=True)[2] != topic_overlap(B, A, top_n=3, per_topic=True)[2]  # NaN


def test_overlap_with_itself_and_a_row_permutation_is_one():
    W = np.random.default_rng(0).dirichlet(np.full(500, 0.1), size=10)
    assert topic_overlap(W, W) == 1.0
    assert topic_overlap(W[np.random.default_rng(1).permutation(10)], W) == 1.0


def test_overlap_of_random_matrices_is_near_chance():
    # Unrelated top-10 lists over V words: one pair's |∩| is hypergeometric with mean n^2 / V, so the
    # row-aligned overlap has mean n / V and the matched one lies between n / V and n K / V (the matching
    # keeps at most the total of all K^2 intersections, mean K^2 n^2 / V). Bounds: 4 standard errors of
    # the mean over R draws.
    rng = np.random.default_rng(0)
    K, V, n, R = 10, 2000, 10, 200
    vals = np.array([topic_overlap(rng.random((K, V)), rng.random((K, V)), top_n=n) for _ in range(R)])
    se = vals.std(ddof=1) / math.sqrt(R)
    assert n / V - 4 * se <= vals.mean() <= n * K / V + 4 * se
    single = np.array([topic_overlap(rng.random((1, V)), rng.random((1, V)), top_n=n) for _ in range(1000)])
    assert abs(single.mean() - n / V) <= 4 * single.std(ddof=1) / math.sqrt(single.size)


@pytest.fixture(scope="module")
def lda_world():
    """Ground-truth topics, a held-out corpus drawn from them, and the 4 control matrices."""
    K, V = 10, 500
    train = synthetic_lda(2000, V, K, alpha0=1.0, beta=0.05, mean_length=60, random_state=0)
    heldout = synthetic_lda(3000, V, K, alpha0=1.0, beta=0.05, mean_length=60, random_state=1,
                            topic_word=train.topic_word)
    return train.topic_word, heldout.X


def shuffled(topic_word, rng, n=10):
    """The topics' own top words dealt out at random to the topics (no repeat within a topic)."""
    top = np.argsort(-topic_word, axis=1, kind="stable")[:, :n]
    while True:
        dealt = rng.permutation(top.ravel()).reshape(top.shape)
        if all(len(set(r)) == n for r in dealt.tolist()):
            return top_words_matrix(dealt, topic_word.shape[1])


def test_true_topics_have_contrast_and_controls_do_not(lda_world):
    truth, heldout = lda_world
    rng = np.random.default_rng(2)
    true_contrast = npmi_contrast(truth, heldout)
    shuffles = np.array([npmi_contrast(shuffled(truth, rng), heldout) for _ in range(40)])
    # A random deal makes every pair of distinct dealt words equally likely to land in one topic or in two,
    # so E[contrast] = 0 up to the no-repeat rejection: the mean over 40 deals is within 4 SE of 0.
    se = shuffles.std(ddof=1) / math.sqrt(shuffles.size)
    assert abs(shuffles.mean()) <= 4 * se + 0.01
    # frequency chunks: the 100 most frequent held-out words cut by rank into 10 lists. Rank carries no
    # topic information, so it is one draw from the same random-assignment law: within 4 SD of 0.
    freq = np.asarray(heldout.sum(axis=0)).ravel()
    chunks = top_words_matrix(np.argsort(-freq, kind="stable")[:100].reshape(10, 10), truth.shape[1])
    assert abs(npmi_contrast(chunks, heldout)) <= 4 * shuffles.std(ddof=1)
    # true topics: far outside that law (and clearly positive)
    assert true_contrast > 0.2
    assert true_contrast > shuffles.mean() + 10 * shuffles.std(ddof=1)
    # shuffling keeps part of the NPMI (frequent words co-occur) but loses contrast
    assert heldout_npmi(truth, heldout) > heldout_npmi(shuffled(truth, rng), heldout)


def test_readability_dict(lda_world):
    truth, heldout = lda_world
    vocab = [f"w{j}" for j in range(truth.shape[1])]
    noisy = truth + np.random.default_rng(0).normal(0, 1e-3, truth.shape)
    r = readability(noisy, vocab, heldout, reference=truth)
    assert set(r) >= {"npmi", "npmi_across", "npmi_contrast", "diversity", "overlap", "per_topic"}
    assert r["npmi_contrast"] == pytest.approx(r["npmi"] - r["npmi_across"])
    assert r["npmi_contrast"] == pytest.approx(npmi_contrast(noisy, heldout))
    assert r["overlap"] == pytest.approx(topic_overlap(noisy, truth))
    assert len(r["per_topic"]["npmi"]) == 10 and len(r["per_topic"]["top_words"][0]) == 10
    assert readability(truth, vocab, heldout)["overlap"] is None
    import json

    json.dumps(r)  # serialisable as it stands


def test_fast_on_20k_by_2000():
    # 20,000 documents x 2,000 words, ~60 distinct words each: measured ~0.1 s on an idle core; the bound
    # leaves room for a loaded shared machine and still catches a dense or per-pair implementation.
    rng = np.random.default_rng(0)
    N, V = 20_000, 2_000
    cols = rng.integers(0, V, size=(N, 60))  # repeats within a row just add up to counts
    X = sp.csr_matrix((np.ones(cols.size), (np.repeat(np.arange(N), 60), cols.ravel())), shape=(N, V))
    W = rng.random((10, V))
    t = time.perf_counter()
    readability(W, [str(j) for j in range(V)], X, reference=rng.random((10, V)))
    assert time.perf_counter() - t < 3.0


def test_validation_messages():
    with pytest.raises(ValueError, match="top_n"):
        heldout_npmi(lists(["a", "b"]), DOCS, top_n=1)
    with pytest.raises(ValueError, match="top_n"):
        topic_overlap(np.ones((2, 4)), np.ones((2, 4)), top_n=5)
    with pytest.raises(ValueError, match="heldout"):
        heldout_npmi(lists(["a", "b"]), DOCS[:, :3], top_n=2)
    with pytest.raises(ValueError, match="2 topics"):
        npmi_contrast(lists(["a", "b"]), DOCS, top_n=2)
    with pytest.raises(ValueError, match="vocabulary"):
        heldout_npmi(lists(["a", "b"]), Corpus.from_matrix(DOCS[:, :3], VOCAB[:3]), top_n=2)
    with pytest.raises(ValueError, match="repeat"):
        top_words_matrix([[0, 0]], 4)


def test_split_users_by_hash():
    users = [f"user{i}" for i in range(2000)]
    mask = heldout_user_mask(users, 0.2, seed=0)
    # Binomial(2000, 0.2): within 4 standard deviations of 400
    assert abs(mask.sum() - 400) <= 4 * math.sqrt(2000 * 0.2 * 0.8)
    # a user's side depends on its own id only: any subset, in any order, gets the same sides
    sub = [users[i] for i in range(1999, 0, -7)]
    np.testing.assert_array_equal(heldout_user_mask(sub, 0.2, seed=0), mask[list(range(1999, 0, -7))])
    assert not np.array_equal(heldout_user_mask(users, 0.2, seed=1), mask)

    X = sp.csr_matrix(np.ones((4000, 3), dtype=int))
    corpus = Corpus.from_matrix(X, ["x", "y", "w"], [users[i // 2] for i in range(4000)])
    train, test = split_users(corpus, 0.2, seed=0)
    assert set(test.user_ids) == {u for u, m in zip(users, mask) if m}
    assert set(train.user_ids) == {u for u, m in zip(users, mask) if not m}
    assert train.n_docs + test.n_docs == corpus.n_docs
    with pytest.raises(ValueError, match="test_fraction"):
        split_users(corpus.subset_users(np.arange(2)), 0.001)
