"""The facts checks of tests/facts.py fail when a fact is missing, out of order, or the message is another's."""

import pytest

from facts import assert_each, assert_facts, raises_facts

REFUSAL = "epsilon must be a real number in (0, inf), got -1; pass epsilon=... to SpectralLDA"


def test_a_missing_or_reordered_fact_fails_and_names_what_is_missing():
    assert_facts(REFUSAL, "epsilon", "(0, inf)", "got -1", ordered=True)
    with pytest.raises(AssertionError, match=r"missing \['got 0'\]"):
        assert_facts(REFUSAL, "epsilon", "got 0")
    with pytest.raises(AssertionError, match="'epsilon' is not after"):
        assert_facts(REFUSAL, "SpectralLDA", "epsilon", ordered=True)  # SpectralLDA is named last
    with pytest.raises(AssertionError, match="is not after"):
        assert_facts("b > a", "a", ">", "b", ordered=True)
    with pytest.raises(AssertionError, match="2 messages, expected 1"):
        assert_each(["max_iter 10 -> 3", "n_jobs 2 -> 1"], ["max_iter 10 -> 3"])
    with pytest.raises(AssertionError, match="missing"):
        assert_each(["max_iter 10 -> 3"], [("max_iter", "-> 4")])


def test_raises_facts_checks_the_exception_and_its_message():
    with raises_facts(ValueError, "epsilon", "(0, inf)") as caught:
        raise ValueError(REFUSAL)
    assert caught.type is ValueError
    with pytest.raises(AssertionError, match="missing"):
        with raises_facts(ValueError, "delta"):
            raise ValueError(REFUSAL)
    with pytest.raises(TypeError):  # another exception is not caught
        with raises_facts(ValueError, "epsilon"):
            raise TypeError(REFUSAL)
