"""print(release) and print(release.top_words(n)): readable, and the data stay what they were."""

import dataclasses
import json

import numpy as np
import pytest

from topicdp.private_release import PrivateRelease, TopWords
from reports import make_report
from topicdp.report import RANDOM_DP_CAVEAT

VOCABULARY = ("goal", "match", "bake", "oven", "vote", "poll", "stock", "bond", "rain", "snow")


def _release(guarantee="approx-DP", seeded=False, vocabulary_status="public: a public word list", **fields):
    W = np.array([[0.4, 0.3, 0.05, 0.05, 0.04, 0.04, 0.03, 0.03, 0.03, 0.03],
                  [0.02, 0.03, 0.5, 0.25, 0.05, 0.05, 0.03, 0.03, 0.02, 0.02]])
    report = make_report(mechanism="test-mechanism", guarantee=guarantee, unit="user", neighbours="add-remove",
                         epsilon=3.0, delta=1e-6, seeded=seeded,
                         published={"topic_word": "DP", "vocabulary": vocabulary_status}, **fields)
    return PrivateRelease(topic_word=W, noisy=W, vocabulary=VOCABULARY, report=report,
                          diagnostics={"secret": "PLANTED-DIAGNOSTIC"})


def test_top_words_is_a_list_of_tuples_with_one_line_per_topic():
    release = _release()
    top = release.top_words(3)
    assert isinstance(top, TopWords) and isinstance(top, list)
    assert top == [[("goal", 0.4), ("match", 0.3), ("bake", 0.05)], [("bake", 0.5), ("oven", 0.25), ("vote", 0.05)]]
    word, weight = top[1][0]  # tuples still unpack
    assert (word, weight) == ("bake", 0.5)
    assert str(top) == "topic 0: goal match bake\ntopic 1: bake oven vote"
    assert json.loads(json.dumps(top)) == [[list(t) for t in topic] for topic in top]


def test_top_words_str_aligns_two_digit_topic_numbers():
    top = TopWords([[(f"w{k}", 1.0)] for k in range(11)])
    lines = str(top).splitlines()
    assert len(lines) == 11 and len({line.index(":") for line in lines}) == 1  # aligned: the colons in one column
    assert [line.split() for line in (lines[0], lines[10])] == [["topic", "0:", "w0"], ["topic", "10:", "w10"]]
    assert str(TopWords()) == ""


def test_str_shows_size_guarantee_and_eight_words_per_topic():
    release = _release()
    text = str(release)
    lines = text.splitlines()
    assert lines[0].startswith("PrivateRelease") and "2 topics" in lines[0] and "10 words" in lines[0]
    guarantee = next(line for line in lines if "guarantee" in line)  # the key facts of the guarantee, in one line
    assert all(fact in guarantee for fact in ("(3, 1e-06)-DP", "user", "add-remove", "test-mechanism"))
    assert "vocabulary: public: a public word list" in text
    topics = {line.split(":")[0].strip(): line.split(":")[1].split() for line in lines if line.startswith("  topic ")}
    assert topics == {"topic 0": "goal match bake oven vote poll stock bond".split(),
                      "topic 1": "bake oven vote poll match stock bond goal".split()}  # ties: by word index
    assert "PLANTED-DIAGNOSTIC" not in text and "PLANTED-DIAGNOSTIC" not in repr(release)


def test_str_flags_random_dp_seeded_and_uncovered_vocabulary():
    release = _release(guarantee="random-DP", seeded=True, vocabulary_status="NOT COVERED: built from the private texts",
                       gamma=0.05)
    text = str(release)
    assert "(3, 1e-06, 0.05)-random DP (NOT differential privacy" in text
    assert "SEEDED: do not publish" in text
    assert "vocabulary: NOT COVERED: built from the private texts" in text
    assert RANDOM_DP_CAVEAT in release.report.notes  # the full caveat is one call away (summary())


def test_repr_is_one_short_line_without_the_matrix():
    release = _release()
    text = repr(release)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("<PrivateRelease") and text.endswith(">")
    assert all(fact in text for fact in ("2 topics", "10 words", "test-mechanism", "approx-DP", "epsilon=3",
                                         "delta=1e-06", "unit=user"))


def test_nonprivate_top_words_prints_too():
    release = dataclasses.replace(_release(), nonprivate=np.eye(2, 10))
    assert str(release.nonprivate_top_words(1)) == "topic 0: goal\ntopic 1: match"
    with pytest.raises(ValueError, match="keep_nonprivate"):
        _release().nonprivate_top_words(1)


def test_with_vocabulary_names_matrix_columns_and_states_their_source():
    import numpy as np
    import pytest

    from topicdp.variational import DPVariationalEM

    X = np.random.default_rng(1).poisson(1.0, size=(40, 3))
    release = DPVariationalEM(2, epsilon=1.0, delta=1e-6, unit="document", random_state=0).fit(X).release_
    assert release.vocabulary == ("0", "1", "2")
    named = release.with_vocabulary(["alpha", "beta", "gamma"], source="private-texts")
    assert named.report.published["vocabulary"].startswith("NOT COVERED")
    assert {w for topic in named.top_words(3) for w, _ in topic} == {"alpha", "beta", "gamma"}
    assert np.array_equal(named.topic_word, release.topic_word)
    with pytest.raises(ValueError, match="3 distinct words"):
        release.with_vocabulary(["a", "a", "b"], source="public")
    with pytest.raises(ValueError, match="already has words"):
        named.with_vocabulary(["x", "y", "z"], source="public")
