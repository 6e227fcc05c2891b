"""A registry row's estimator that fails inside its fit: a fault inside a mechanism, for the refusal tests."""

from __future__ import annotations

from dataclasses import replace


def failing_row(row, fault):
    """``row`` whose estimator's ``fit`` calls ``fault(ledger=..., n_units=...)`` (which raises)."""

    class Failing:
        def __init__(self, n_units: int) -> None:
            self.n_units = n_units

        def fit(self, corpus, *, ledger, **_):
            fault(ledger=ledger, n_units=self.n_units)
            raise AssertionError("the fault did not raise")

    return replace(row, estimator=lambda plan, n_units, start: Failing(n_units))
