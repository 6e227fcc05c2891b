"""Progress of long steps (:class:`Progress`, :func:`timed`): a tqdm bar in a notebook or on a terminal, otherwise
INFO lines with an ETA on the ``topicdp`` logger (at most one every :data:`LOG_EVERY_SECONDS`, on stderr when no
handler shows them). ``progress=False`` or :data:`PROGRESS_ENV` (which wins) switch the display off, not the records.
Only public quantities are counted (pairs, passes, steps), never a count of the private data.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Iterator

logger = logging.getLogger("topicdp")

#: seconds between two progress log lines (the first and the last step are always logged)
LOG_EVERY_SECONDS = 30.0
#: the environment variable that switches topicdp's own progress display off (``0``, ``false``, ``no``, ``off``)
#: or leaves it on (``1``, ``true``, ``yes``, ``on``, or unset)
PROGRESS_ENV = "TOPICDP_PROGRESS"
_OFF = ("0", "false", "no", "off")
_ON = ("", "1", "true", "yes", "on")


def format_duration(seconds: float) -> str:
    """A duration to read: tenths of a second below 10 s (passes of a few tenths each otherwise all read "2 s")."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether a long step shows progress: ``progress`` (None: yes) unless :data:`PROGRESS_ENV` says off (or is bad).

    >>> progress_enabled(False)
    False
    """
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    value = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if value not in _OFF + _ON:
        raise ValueError(f"the environment variable {PROGRESS_ENV} must be one of {_OFF + _ON[1:]} (or unset), "
                         f"got {os.environ[PROGRESS_ENV]!r}")
    return progress is not False and value not in _OFF


def say(line: str, *, show: bool = True) -> None:
    """Log ``line`` at INFO on the ``topicdp`` logger, and write it to stderr too when ``show`` and no handler shows
    those lines (a session without logging set-up, a notebook)."""
    logger.info("%s", line)
    if show and not _logger_shows_info():
        try:
            print(f"topicdp: {line}", file=sys.stderr, flush=True)
        except (AttributeError, ValueError, OSError):  # no stderr (pythonw) or a closed one: nothing to show on
            pass


class Progress:
    """Counts finished steps of ``what`` (``total``: a public number): a tqdm bar where ``bar`` (resolved by
    :func:`progress_enabled`), otherwise INFO lines at most every ``log_every`` seconds; ``bar=False`` logs only.
    """

    def __init__(self, total: int, what: str, *, bar: bool = False, log_every: float = LOG_EVERY_SECONDS) -> None:
        self.total, self.what, self.log_every = total, what, log_every
        self.show = bool(bar)
        self.done = 0
        self.start = time.perf_counter()
        self._last_log = -math.inf
        self._bar = None
        if bar and (in_notebook() or _stderr_is_terminal()):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=what, file=sys.stderr)

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        elapsed = now - self.start
        remaining = elapsed / max(self.done, 1) * max(self.total - self.done, 0)
        eta = datetime.now(timezone.utc) + timedelta(seconds=remaining)
        if self._bar is not None:
            self._bar.set_postfix_str(f"ETA {eta:%H:%M:%S} UTC" if self.done < self.total else "", refresh=False)
            self._bar.update(n)
            return
        if not math.isinf(self.log_every) and (self.done in (1, self.total) or now - self._last_log >= self.log_every):
            self._last_log = now
            say(f"{self.what} {self.done}/{self.total}, {format_duration(elapsed)} elapsed, "
                f"{format_duration(remaining)} left, ETA {eta:%H:%M:%S} UTC", show=self.show)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@contextmanager
def timed(what: str, *, show: bool | None = None) -> Iterator[None]:
    """Log the start and the duration of a one-shot step on the ``topicdp`` logger (shown as :func:`say` shows,
    when :func:`progress_enabled` of ``show``)."""
    visible = progress_enabled(show)
    start = time.perf_counter()
    say(f"{what} ...", show=visible)
    yield
    say(f"{what}: done in {format_duration(time.perf_counter() - start)}", show=visible)


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (``tqdm.auto``'s test, less the consoles that are not notebooks)."""
    if "ipykernel.zmqshell" not in sys.modules:
        return False
    if any(name == "QT_API" or name.startswith("SPYDER") for name in os.environ):
        return False
    try:
        shell = sys.modules["IPython"].get_ipython()
    except (KeyError, AttributeError):
        return False
    return shell is not None and "qt" not in type(shell).__name__.lower()


def _logger_shows_info() -> bool:
    """Whether a logging handler receives the ``topicdp`` logger's INFO records (the command line's, a user's)."""
    return logger.isEnabledFor(logging.INFO) and logger.hasHandlers()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def shown_on_stderr() -> Iterator[None]:
    """Show the ``topicdp`` logger's INFO lines on stderr inside the block (the command's ``main``), then restore it."""
    class StderrHandler(logging.StreamHandler):
        stream = property(lambda self: sys.stderr, lambda self, value: None)  # today's stderr, as logging.lastResort

    if logger.handlers:  # the caller's own logging set-up shows the lines
        yield
        return
    handler, level = StderrHandler(), logger.level
    handler.setFormatter(logging.Formatter("topicdp: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
