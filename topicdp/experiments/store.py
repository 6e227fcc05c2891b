"""A tidy, resumable results table: one CSV row per (task, metric), appended as tasks finish.

An interrupted comparison resumes from the rows already written: a task whose key is in the file is
skipped. A task's rows are written together, so a task is either complete in the file or absent.
"""

from __future__ import annotations

import csv
import json
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
        with self.path.open("a", newline="") as fh:
            csv.DictWriter(fh, FIELDS).writerows(rows)
        self.done.add(task_key(key))

    def rows(self) -> list[dict]:
        with self.path.open(newline="") as fh:
            return list(csv.DictReader(fh))
