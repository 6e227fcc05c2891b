"""Topic coherence through gensim's CoherenceModel: closed forms on tiny texts."""

import math

import numpy as np
import pytest

from gensim_coherence import count_unseen_topic_words, topic_coherence

VOCAB = ["a", "b", "c", "d", "e", "z"]
# 'a' and 'b' always co-occur; 'c' is in 9 of 12 texts, 'd' in 6, together in 3
TEXTS = [["a", "b", "c"], ["a", "b"], ["c", "d"], ["d", "e", "c"]] * 3


def weights(*words):
    W = np.zeros((1, len(VOCAB)))
    for rank, w in enumerate(words):
        W[0, VOCAB.index(w)] = len(words) - rank
    return W


def test_npmi_of_always_cooccurring_words_is_one():
    assert topic_coherence(weights("a", "b"), VOCAB, TEXTS, top_n=2) == pytest.approx(1.0, abs=1e-9)


def test_npmi_closed_form():
    # each text is a single window (shorter than 10): P(c)=9/12, P(d)=6/12, P(c,d)=6/12 ('c','d' co-occur in
    # ['c','d'] and ['d','e','c'], 6 of the 12 texts)
    pc, pd, pcd = 9 / 12, 6 / 12, 6 / 12
    npmi = math.log(pcd / (pc * pd)) / -math.log(pcd)
    assert topic_coherence(weights("c", "d"), VOCAB, TEXTS, top_n=2) == pytest.approx(npmi, abs=1e-9)


def test_umass_closed_form():
    # gensim's u_mass: log((D(d, c)/N + eps) / (D(c)/N)) for the pair (w_2=d | w_1=c)
    expected = math.log((6 / 12 + 1e-12) / (9 / 12))
    assert topic_coherence(weights("c", "d"), VOCAB, TEXTS, measure="u_mass", top_n=2) == pytest.approx(expected)


def test_unseen_words_get_the_worst_value():
    W = weights("a", "b", "z")  # z never occurs: 2 of the 3 pairs involve it
    npmi = topic_coherence(W, VOCAB, TEXTS, top_n=3)
    assert npmi == pytest.approx((1.0 - 1.0 - 1.0) / 3, abs=1e-9)
    umass = topic_coherence(W, VOCAB, TEXTS, measure="u_mass", top_n=3)
    seen = math.log(12 / 12 + 1e-12)  # D(a,b)/N / (D(a)/N) = 1
    assert umass == pytest.approx((seen + 2 * math.log(1e-12)) / 3)
    assert count_unseen_topic_words(W, VOCAB, TEXTS, top_n=3) == 1


def test_per_topic_and_cv_run():
    W = np.vstack([weights("a", "b"), weights("c", "d")])
    per = topic_coherence(W, VOCAB, TEXTS, top_n=2, per_topic=True)
    assert per.shape == (2,) and per[0] > per[1]
    cv = topic_coherence(W, VOCAB, TEXTS, measure="c_v", top_n=2, per_topic=True)
    assert np.all(np.isfinite(cv))


def test_invalid_measure():
    with pytest.raises(ValueError, match="measure"):
        topic_coherence(weights("a", "b"), VOCAB, TEXTS, measure="c_uci2")
