"""The sampler's cost, forecast before the work (2h fits from one fit's time: ceil(h / w) rounds of 2 fits on w
workers), a budget that refuses a run forecast over ``max_minutes``, and the pairs' progress
(:mod:`topicdp._progress`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .._progress import LOG_EVERY_SECONDS, Progress, format_duration, logger

__all__ = ["LOG_EVERY_SECONDS", "CostForecast", "PairProgress", "check_budget", "format_duration", "logger"]


@dataclass(frozen=True)
class CostForecast:
    """Expected wall time of sensitivity sampling from one fit's time on the private corpus."""

    n_pairs: int
    fit_seconds: float
    n_workers: int

    @property
    def n_fits(self) -> int:
        return 2 * self.n_pairs

    @property
    def seconds(self) -> float:
        """ceil(h / w) rounds of two sequential fits: each pair is one task."""
        return 2 * math.ceil(self.n_pairs / self.n_workers) * self.fit_seconds

    @property
    def minutes(self) -> float:
        return self.seconds / 60.0

    def describe(self) -> str:
        eta = datetime.now(timezone.utc) + timedelta(seconds=self.seconds)
        return (f"{self.n_fits} fits x {self.fit_seconds:.3g} s / {self.n_workers} worker(s) = "
                f"{format_duration(self.seconds)} expected, ETA {eta:%H:%M:%S} UTC")


def check_budget(forecast: CostForecast, max_minutes: float, *, gamma: float, sizing: str,
                 exchangeable_pairs: int, n_records: int, unit: str, max_workers: int) -> None:
    """Raise ValueError when ``forecast`` exceeds ``max_minutes``, naming options that would fit: exchangeable sizing,
    a faster model, fewer records (fit time taken as proportional to the corpus size), more workers."""
    if forecast.minutes <= max_minutes:
        return
    budget = max_minutes * 60.0
    options = []
    if sizing != "exchangeable":
        other = CostForecast(exchangeable_pairs, forecast.fit_seconds, forecast.n_workers)
        verdict = "within the budget" if other.minutes <= max_minutes else "still over the budget"
        options.append(f"sizing='exchangeable' (CLI: --sizing exchangeable): h={exchangeable_pairs} pairs, "
                       f"{format_duration(other.seconds)}, {verdict} (its gamma is marginal over the sensitivity "
                       "sample and the neighbouring pair, not sample-conditional)")
    rounds = math.ceil(forecast.n_pairs / forecast.n_workers)
    options.append(f"a faster model whose fit takes at most {budget / (2 * rounds):.3g} s "
                   f"(this one takes {forecast.fit_seconds:.3g} s)")
    share = budget / forecast.seconds
    options.append(f"fewer {unit}s: at most about {max(2, math.floor(n_records * share))} of {n_records} "
                   "(taking the fit time as proportional to the corpus size)")
    if forecast.n_workers < min(max_workers, forecast.n_pairs):
        options.append(f"more workers: n_jobs up to {max_workers} cores")
    raise ValueError(
        f"sensitivity sampling is forecast to take {format_duration(forecast.seconds)} "
        f"({forecast.describe()}), over max_minutes={max_minutes:g} (gamma={gamma:g}, sizing={sizing!r}). "
        "Options: " + "; ".join(options) + "."
    )


class PairProgress(Progress):
    """Counts finished sensitivity pairs (:class:`topicdp._progress.Progress`)."""

    def __init__(self, total: int, bar: bool) -> None:
        super().__init__(total, "sensitivity pairs", bar=bar)
