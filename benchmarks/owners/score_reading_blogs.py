"""How ``evaluate`` and ``compare`` read scores on blogs: the yardstick and the common-words flag on real text.

The public reference is the bloggers a hash of the id puts in the last quarter (``not user_selected(u, 0.75)``,
disjoint from the newcomer releases' private half), 20 posts each. On it: its 100 words found in the most documents
(the flag's public list), the yardstick (:func:`topicdp.metrics.yardstick.fit_yardstick`, K = 10: a non-private
gensim LDA fitted on half of its bloggers, scored exactly on the other half), each of the yardstick's topics'
common-word counts, the same for the newcomer releases' published lists (``docs/results/newcomer_blogs_*.md``), and
the exact per-topic NPMI and contrast, on the held-out half, of the yardstick's lists with the chatter list of the
user report in place of its last topic. Everything read is public; nothing is spent.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/score_reading_blogs.py --out docs/results/score_reading_blogs.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS as _BLOGS, ROOT, nearest  # noqa: E402

#: the blogs beside the repository, or beside the folder of worktrees it is checked out in
BLOGS = nearest(_BLOGS)
CHATTER = "just like really going don know think time good got".split()


def reference_records(cap: int = 20) -> list[tuple[str, object]]:
    from topicdp.corpus import read_jsonl_records
    from topicdp.pipeline import user_selected

    per: dict = defaultdict(int)
    out = []
    for t, u in read_jsonl_records(str(BLOGS), "text", "user"):
        if not user_selected(u, 0.75) and per[u] < cap:
            per[u] += 1
            out.append((t, u))
    return out


def newcomer_lists(path: Path) -> list[list[str]]:
    """The released top-10 lists a newcomer note printed."""
    if not path.exists():
        return []
    text = path.read_text()
    block = text[text.index("Released top words:"):].split("\n\n")[1]
    return [line.split(". ", 1)[1].split() for line in block.splitlines() if re.match(r"\d+\. ", line)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if not BLOGS.exists():
        print(f"skipped: {BLOGS} is absent")
        return 0
    import numpy as np

    from topicdp.corpus import Corpus
    from topicdp.metrics.readability import _contrast, top_words_matrix
    from topicdp.metrics.yardstick import (_split, common_word_counts, fit_yardstick, is_common,
                                           most_common_words)

    t0 = time.perf_counter()
    records = reference_records()
    texts, users = [t for t, _ in records], [u for _, u in records]
    common = most_common_words(texts)
    yardstick = fit_yardstick(texts, users, 10)
    seconds = time.perf_counter() - t0
    out = ["# Reading scores on blogs: the yardstick and the common-words flag", "",
           f"Public reference: {len(set(users))} bloggers (hash in the last quarter), {len(texts)} posts (20 a "
           f"blogger at most). Yardstick and list in {seconds:.0f} s.", "",
           f"- {yardstick.line()}", "- the reference's 30 most common of its 100: " + " ".join(common[:30]), "",
           "| list | common words of 10 | flagged |", "|---|---|---|"]
    rows = [("chatter list of the user report", CHATTER)]
    rows += [(f"yardstick LDA topic {k}", list(t)) for k, t in enumerate(yardstick.top_words)]
    for unit in ("user", "document"):
        rows += [(f"newcomer release ({unit} level) topic {k}", t)
                 for k, t in enumerate(newcomer_lists(ROOT / "docs" / "results" / f"newcomer_blogs_{unit}.md"))]
    for name, words in rows:
        (c,) = common_word_counts([words], common)
        out.append(f"| {name}: {' '.join(words)} | {c} | {'yes' if is_common(c) else 'no'} |")
    lists = [list(t) for t in yardstick.top_words[:-1]] + [CHATTER]
    corpus = Corpus.from_texts(texts, users, vocabulary=sorted({w for t in lists for w in t}))
    _, heldout, how = _split(corpus)
    W = top_words_matrix(np.array([[corpus.vocabulary.index(w) for w in t] for t in lists]), corpus.n_words)
    scores = _contrast(W, heldout, None, 10)
    out += ["", f"Exact scores on the reference's held-out half ({how}) of the yardstick's first nine lists and the "
            "chatter list as the tenth:", "", "| list | NPMI | contrast |", "|---|---|---|"]
    out += [f"| {'chatter' if k == 9 else f'yardstick topic {k}'} | {scores['within'][k]:.3f} | "
            f"{scores['per_topic'][k]:.3f} |" for k in range(10)]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
