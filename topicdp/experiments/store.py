"""A tidy, resumable results table: one CSV row per (task, metric), appended as tasks finish.

An interrupted comparison resumes from the rows already written: a task whose key is in the file is
skipped. A task's rows are appended by one ``write`` system call and flushed to disk, so a kill leaves a task
complete in the file or absent; a last line without its newline (a file system that split the write) is
dropped when the file is opened again.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

KEY_FIELDS = ("panel", "corpus", "mechanism", "model", "n_topics", "epsilon", "gamma", "repeat")
FIELDS = KEY_FIELDS + ("metric", "value", "delta", "guarantee", "sigma", "sensitivity", "extra")


def task_key(row: dict) -> tuple:
    return tuple(str(row.get(f, "")) for f in KEY_FIELDS)


class ResultStore:
    """Append-only CSV of results with the set of completed task keys."""

    def __init__(self, path) -> None:
        self.path = Path(path)
        self.done: set[tuple] = set()
        if self.path.exists():
            _drop_partial_line(self.path)
            with self.path.open(newline="") as fh:
                self.done = {task_key(r) for r in csv.DictReader(fh)}
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w", newline="") as fh:
                csv.DictWriter(fh, FIELDS).writeheader()

    def has(self, **key) -> bool:
        return task_key(key) in self.done

    def write(self, key: dict, metrics: dict, **info) -> None:
        """Write one task's metrics (name -> value) as rows sharing ``key`` and ``info``."""
        extra = info.pop("extra", None)
        rows = [
            {**key, **info, "metric": name, "value": value, "extra": json.dumps(extra) if extra else ""}
            for name, value in metrics.items()
        ]
        text = io.StringIO(newline="")
        csv.DictWriter(text, FIELDS).writerows(rows)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            data = text.getvalue().encode("utf-8")
            while data:  # one call in practice; a short write (a full disk) continues where it stopped
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        self.done.add(task_key(key))

    def rows(self) -> list[dict]:
        with self.path.open(newline="") as fh:
            return list(csv.DictReader(fh))


def _drop_partial_line(path: Path) -> None:
    """Cut a last line that lacks its newline: the unfinished append of a run that was killed."""
    with path.open("rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
