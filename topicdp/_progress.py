"""Progress of long steps on the ``topicdp`` logger: a tqdm bar on a terminal, log lines with an ETA otherwise.

Every long step of a release reports through :class:`Progress` (the sensitivity sampler's pairs, each pass of
dp-vem and DP-SVI) or :func:`timed` (one-shot steps: the vocabulary selection, the spectral moments), so a
user sees how far a run is and when it will end, as gensim users do.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Iterator

logger = logging.getLogger("topicdp")

#: seconds between two progress log lines (the first and the last step are always logged)
LOG_EVERY_SECONDS = 30.0


def format_duration(seconds: float) -> str:
    """A duration to read: tenths of a second below 10 s (passes of a few tenths each otherwise all read "2 s")."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """Counts finished steps of ``what``: a tqdm bar on a terminal (``bar=True``), otherwise INFO lines on the
    ``topicdp`` logger with the elapsed time, the time left and an ETA, at most every ``log_every`` seconds.

    Parameters
    ----------
    total : int
    what : str
        What is counted, e.g. ``"sensitivity pairs"`` or ``"dp-vem passes"``.
    bar : bool
    log_every : float
        Seconds between two log lines (0: every step).
    """

    def __init__(self, total: int, what: str, *, bar: bool = False, log_every: float = LOG_EVERY_SECONDS) -> None:
        self.total, self.what, self.log_every = total, what, log_every
        self.done = 0
        self.start = time.perf_counter()
        self._last_log = -math.inf
        self._bar = None
        if bar and _stderr_is_terminal():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=what)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.perf_counter()
        if math.isinf(self.log_every):
            return
        if self.done in (1, self.total) or now - self._last_log >= self.log_every:
            self._last_log = now
            elapsed = now - self.start
            remaining = elapsed / self.done * (self.total - self.done)
            eta = datetime.now(timezone.utc) + timedelta(seconds=remaining)
            logger.info("%s %d/%d, %s elapsed, %s left, ETA %s UTC", self.what, self.done, self.total,
                        format_duration(elapsed), format_duration(remaining), f"{eta:%H:%M:%S}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@contextmanager
def timed(what: str) -> Iterator[None]:
    """Log the start and the duration of a one-shot step on the ``topicdp`` logger."""
    start = time.perf_counter()
    logger.info("%s ...", what)
    yield
    logger.info("%s: done in %s", what, format_duration(time.perf_counter() - start))


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
