"""The blog corpus split for ``topicdp compare`` (``docs/results/compare.md``): a public reference P and a private part.

A blogger is in P when the hash of their id falls in the upper half (:func:`topicdp.pipeline.user_selected` at 0.5,
as ``benchmarks/utility/stable_starts.py``'s ``halves()``), and in the private part when it falls below
``--fraction`` (0.3: about 1,200 of the 3,968 bloggers, a subset of the lower half, so P and the private part share no
blogger). Both are written as JSON Lines (user, text), the files ``topicdp compare`` reads::

    .venv/bin/python benchmarks/owners/compare_blogs.py ../shared/data/blogs/blogs.jsonl.gz --out /tmp/compare_blogs
    topicdp compare /tmp/compare_blogs/private.jsonl.gz --reference /tmp/compare_blogs/P.jsonl.gz --out DIR
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from topicdp.corpus import read_jsonl_records
from topicdp.pipeline import user_selected


def split(path: str, fraction: float) -> tuple[list, list]:
    """(private, public) lists of (text, user): private below ``fraction`` of the hash, public in its upper half."""
    if not 0 < fraction <= 0.5:
        raise ValueError(f"fraction must be in (0, 0.5] (the private part lies in the lower half), got {fraction}")
    records = list(read_jsonl_records(path))
    private = [(t, u) for t, u in records if user_selected(u, fraction)]
    public = [(t, u) for t, u in records if not user_selected(u, 0.5)]
    return private, public


def write(path: Path, records: list) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for text, user in records:
            fh.write(json.dumps({"user": user, "text": text}) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--out", required=True, help="directory for private.jsonl.gz and P.jsonl.gz")
    parser.add_argument("--fraction", type=float, default=0.3, help="the private part's share of all bloggers")
    args = parser.parse_args(argv)
    private, public = split(args.corpus, args.fraction)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write(out / "private.jsonl.gz", private)
    write(out / "P.jsonl.gz", public)
    for name, records in (("private", private), ("P", public)):
        print(f"{name}: {len({u for _, u in records}):,} bloggers, {len(records):,} posts")


if __name__ == "__main__":
    main()
