"""Where the benchmarks find the shared corpora, and the one way they cut a corpus by user.

The corpora live beside the repository (``../shared/data``), never inside it; a benchmark that needs one checks
:func:`available` and skips (exit 0) where it is absent. The scripts sit one folder down, by what they measure
(``privacy/``, ``utility/``, ``speed/``, ``owners/``, ``refactors/``; ``benchmarks/README.md``); each puts
``benchmarks/`` on ``sys.path`` first, so that ``from _data import ...`` and ``from utility.utility_real import ...``
work however it is started (``python benchmarks/GROUP/script.py`` from the repository root, or loaded by path).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
BLOGS = SHARED / "blogs" / "blogs.jsonl.gz"
BLOGS_MORE = SHARED / "blogs-more" / "blogs.jsonl.gz"
ENRON = SHARED / "enron_sent" / "enron_sent.jsonl.gz"


def available(*paths: Path) -> bool:
    """Whether every corpus in ``paths`` is there (print the skip line yourself)."""
    return all(p.exists() for p in paths)


def nearest(path: Path) -> Path:
    """``path`` (one of the corpora above) beside the nearest folder above the repository that holds it: a checkout
    in a folder of worktrees finds the corpora one level further up; ``path`` itself where none does."""
    relative = path.relative_to(ROOT.parent)
    return next((p / relative for p in ROOT.parents if (p / relative).exists()), path)


def records(path: Path):
    """The JSON records of a ``.jsonl`` or ``.jsonl.gz`` file, in order."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def user_share(user, salt: str) -> float:
    """A user's place in [0, 1): SHA-256 of (salt, id), so that each salt is an independent cut by user."""
    digest = hashlib.sha256(f"{salt}\x00{user}".encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2.0 ** 64


def write_users(path: Path, out: Path, salt: str, low: float, high: float, *, user_field: str = "user") -> int:
    """Write the records of the users whose share under ``salt`` lies in [low, high) to ``out`` (JSON Lines, gzip
    if it ends in .gz); returns the number of users written."""
    users = set()
    opener = gzip.open if str(out).endswith(".gz") else open
    with opener(out, "wt", encoding="utf-8") as fh:
        for r in records(path):
            if low <= user_share(r[user_field], salt) < high:
                users.add(r[user_field])
                fh.write(json.dumps(r) + "\n")
    return len(users)
