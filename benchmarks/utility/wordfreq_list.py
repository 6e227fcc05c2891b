"""A public word list that needs no corpus: the most frequent words of a language, from the ``wordfreq`` package
(Speer et al., word frequencies aggregated over Wikipedia, subtitles, news, books, web text, Twitter and Reddit).

Word frequencies of a language are public knowledge: a release that takes its columns from such a list spends
nothing on selecting them, where the DP selection at the user level keeps only the words many users share. Kept:
words that topicdp's tokeniser leaves whole (letters, at least 3 characters) and that are not English stop words,
in wordfreq's order, the first ``--size``. What it loses: rare and domain words (names, jargon, "urllink"), which
no list of a whole language ranks in its first few thousand. Run (``pip install wordfreq``; not a dependency)::

    python benchmarks/utility/wordfreq_list.py --size 2000 --out words-en-2000.txt
    topicdp privatize posts.jsonl.gz --unit user --vocabulary words-en-2000.txt ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def word_list(size: int, language: str = "en") -> list[str]:
    """The first ``size`` words of wordfreq's list for ``language`` that the tokeniser keeps whole."""
    import wordfreq

    from topicdp.corpus import tokenize

    words: list[str] = []
    for word in wordfreq.top_n_list(language, 20 * size):
        if tokenize([word]) == [[word]] and word not in words:
            words.append(word)
            if len(words) == size:
                return words
    raise ValueError(f"wordfreq's list for {language!r} has fewer than {size} usable words")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--language", default="en")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    Path(args.out).write_text("\n".join(word_list(args.size, args.language)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
