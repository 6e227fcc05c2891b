"""Checks of a message by its key facts (the parameter, the number, the allowed range, the decision word).

A test that compares a whole printed sentence fails when the wording changes and the behaviour does not; one that
asserts each fact fails when a fact is missing, wrong or (with ``ordered``) out of order. Each check names every
missing fact at once, with the message it searched.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import pytest


def assert_facts(text: str, *facts: str, ordered: bool = False) -> None:
    """Assert that each fact (a plain substring, case as given) appears in ``text``.

    With ``ordered``, each fact must appear after the end of the one before it: ``"a", ">", "b"`` holds for
    ``"a > b"`` and not for ``"b > a"``.
    """
    missing = [fact for fact in facts if fact not in text]
    assert not missing, f"missing {missing} in {text!r}"
    if ordered:
        at = 0
        for fact in facts:
            found = text.find(fact, at)
            assert found >= 0, f"{fact!r} is not after {text[:at]!r} in {text!r} (expected the order {list(facts)})"
            at = found + len(fact)


def assert_each(texts: Sequence[str], facts: Sequence[str | tuple[str, ...]]) -> None:
    """Assert that there are as many ``texts`` as entries of ``facts`` and that text ``i`` holds the fact(s) ``i``."""
    assert len(texts) == len(facts), f"{len(texts)} messages, expected {len(facts)}: {list(texts)}"
    for text, expected in zip(texts, facts):
        assert_facts(text, *((expected,) if isinstance(expected, str) else expected))


@contextmanager
def raises_facts(exception: type[BaseException] | tuple[type[BaseException], ...], *facts: str,
                 ordered: bool = False) -> Iterator[pytest.ExceptionInfo]:
    """``pytest.raises(exception)`` whose message must hold every fact (see :func:`assert_facts`)."""
    with pytest.raises(exception) as info:
        yield info
    assert_facts(str(info.value), *facts, ordered=ordered)
