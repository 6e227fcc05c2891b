"""The public reference's own most frequent words as a word list (the "public data: yes" quarter of the users of
``benchmarks/utility/no_public_data.py``: ``0.5 <= h < 0.75`` of the user-id hash), for ``--word-list``::

    python benchmarks/utility/reference_word_list.py --corpus blogs --out ref-blogs-2000.txt
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/no_public_data.py --corpora blogs \
        --units user document --epsilons 3 --with-public-at 3 --word-list ref-blogs-2000.txt

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="blogs", choices=("blogs", "enron_sent"))
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    path = DATA / args.corpus / f"{args.corpus}.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} is absent")
        return 0
    from topicdp.corpus import read_jsonl_records
    from topicdp.pipeline import user_selected

    texts = [t for t, u in read_jsonl_records(path) if user_selected(u, 0.75) and not user_selected(u, 0.5)]
    Path(args.out).write_text("\n".join(most_frequent(texts, args.size)) + "\n")
    return 0


def most_frequent(texts, size: int) -> list[str]:
    """The ``size`` most frequent tokens of ``texts`` (the package's tokeniser), most frequent first."""
    from topicdp.corpus import tokenize

    counts = Counter(w for doc in tokenize(texts) for w in doc)
    return [w for w, _ in counts.most_common(size)]


if __name__ == "__main__":
    sys.exit(main())
