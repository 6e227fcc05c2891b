"""A registry row's estimator that fails inside its fit: a fault inside a mechanism, for the refusal tests."""

from __future__ import annotations

from dataclasses import replace


def failing_row(row, fault):
    """``row`` whose estimator's ``fit`` calls ``fault(ledger=..., n_units=...)`` (which raises); its planned
    entries are the row's own estimator's, as a row plans them."""

    class Failing:
        def __init__(self, plan, n_units: int, start) -> None:
            self.n_units, self.real = n_units, row.estimator(plan, n_units, start)

        def planned_entries(self) -> list:
            return self.real.planned_entries()

        def fit(self, corpus, *, ledger, **_):
            fault(ledger=ledger, n_units=self.n_units)
            raise AssertionError("the fault did not raise")

    return replace(row, estimator=Failing)
