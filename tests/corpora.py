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


def generated_lda(n_docs: int = 6000):
    """A generated LDA corpus (K = 5, 400 words, ``n_docs`` documents, 3 per user; fixed seed) and its true topics'
    top-10 lists. Its words are letters only, so the tokenizer keeps them."""
    from topicdp.corpus import Corpus
    from topicdp.datasets import synthetic_lda

    data = synthetic_lda(n_docs, 400, 5, alpha0=0.5, beta=0.05, mean_length=60, random_state=3)
    words = [f"zq{chr(97 + j // 26)}{chr(97 + j % 26)}" for j in range(400)]
    corpus = Corpus.from_matrix(data.X, words, users=np.arange(n_docs) // 3)
    lists = [[words[j] for j in np.argsort(-row, kind="stable")[:10]] for row in data.topic_word]
    return corpus, lists


def release_of_lists(lists):
    """A document-level DP release whose topics are ``lists`` (each word's weight from its rank), over the lists'
    words: a stand-in for a fit where only the top words matter."""
    from topicdp.metrics.readability import top_words_matrix
    from topicdp.private_release import PrivateRelease
    from topicdp.report import ReportParts, compose_report

    vocab = sorted({w for t in lists for w in t})
    W = top_words_matrix(np.array([[vocab.index(w) for w in t] for t in lists]), len(vocab))
    report = compose_report(ReportParts({"topic_word": "DP", "vocabulary": "public"}), mechanism="dp-vem",
                            guarantee="approx-DP", unit="document", neighbours="add-remove", epsilon=1.0,
                            delta=1e-6, seeded=True)
    return PrivateRelease(topic_word=W, noisy=None, vocabulary=tuple(vocab), report=report)


def write_token_shards(directory: Path, rng: np.random.Generator) -> str:
    """Three JSON Lines shards of 150 posts by 17 users, each post 2-11 words of ten (letters only: tokens) taken
    from 30; returns their glob."""
    words = [f"word{chr(97 + i)}{chr(97 + j)}" for i in range(6) for j in range(5)]
    for s in range(3):
        with open(directory / f"p{s}.jsonl", "w") as fh:
            for n in range(150):
                text = " ".join(rng.choice(words[(s * 7) % 20:(s * 7) % 20 + 10], size=rng.integers(2, 12)))
                fh.write(json.dumps({"text": text, "user": f"u{n % 17}"}) + "\n")
    return str(directory / "p*.jsonl")
