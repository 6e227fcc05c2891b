"""Generated corpora the tests share: users writing documents drawn from three blocks of twenty words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import numpy as np

#: 60 words in three blocks of twenty (three topics)
WORDS = [f"w{a}{b}" for a in "abcdef" for b in "abcdefghij"]


def three_block_texts(n_users: int, docs: int, *, size: int,
                      seed: int | np.random.Generator = 0) -> Iterator[tuple[str, int, str]]:
    """``(user id, document index, text)``: each document ``size`` words drawn from one block of :data:`WORDS`
    chosen at random, so every word is shared by many users (a DP vocabulary keeps them). ``seed``: a seed, or a
    generator the caller goes on drawing from."""
    rng = np.random.default_rng(seed)
    for u in range(n_users):
        for d in range(docs):
            block = rng.integers(3)
            yield f"u{u}", d, " ".join(rng.choice(WORDS[20 * block:20 * block + 20], size=size))


def write_three_block_files(root: Path) -> Path:
    """``root/corpus.jsonl`` (400 users x 3 documents of :func:`three_block_texts`) and ``root/words.txt`` (WORDS):
    over this public word list the plan refuses the topics at epsilon 0.05 per user."""
    lines = [json.dumps({"user": u, "text": text}) for u, _, text in three_block_texts(400, 3, size=30)]
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (root / "words.txt").write_text("\n".join(WORDS) + "\n")
    return root
