"""Reading one corpus from every source: the time to read its records, as ratios to JSON Lines, and whether they are
the same records.

    OPENBLAS_NUM_THREADS=1 python benchmarks/speed/bench_sources.py [--n-docs 200000] [--data-dir /tmp/topicdp-bench-sources]

The same synthetic records (users ``u0`` ..., 25 words each, a date) are written as JSON Lines, Parquet, CSV and a
SQLite table, and held as a pandas DataFrame; each is read with :func:`topicdp.corpus.read_source_records` (the one
record reader of every release), best of three. Needs the ``tables`` and ``sql`` extras and pandas.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-docs", type=int, default=200_000)
    parser.add_argument("--data-dir", default="/tmp/topicdp-bench-sources")
    a = parser.parse_args()

    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from topicdp.corpus import read_source_records

    os.makedirs(a.data_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(2000)])
    rows = [{"author": f"u{rng.integers(a.n_docs // 5)}", "body": " ".join(rng.choice(words, 25)),
             "date": "2004-05-01"} for _ in range(a.n_docs)]
    paths = {"jsonl": os.path.join(a.data_dir, "posts.jsonl"), "parquet": os.path.join(a.data_dir, "posts.parquet"),
             "csv": os.path.join(a.data_dir, "posts.csv"), "sqlite": os.path.join(a.data_dir, "posts.db")}
    with open(paths["jsonl"], "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, paths["parquet"])
    pacsv.write_csv(table, paths["csv"])
    if os.path.exists(paths["sqlite"]):
        os.remove(paths["sqlite"])
    with sqlite3.connect(paths["sqlite"]) as con:
        con.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, author TEXT, body TEXT, date TEXT)")
        con.executemany("INSERT INTO posts VALUES (?, ?, ?, ?)",
                        [(i, r["author"], r["body"], r["date"]) for i, r in enumerate(rows)])
    frame = pd.DataFrame(rows)
    sources = {"jsonl": (paths["jsonl"], None), "parquet": (paths["parquet"], None), "csv": (paths["csv"], None),
               "pandas": (frame, None),
               "sqlite": (f"sqlite:///{paths['sqlite']}", "SELECT author, body FROM posts ORDER BY id")}
    reference = None
    times = {}
    for name, (path, query) in sources.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            records = list(read_source_records(path, "body", "author", query=query))
            best = min(best, time.perf_counter() - start)
        reference = records if reference is None else reference
        times[name] = best
        size = "" if name == "pandas" else f", {os.path.getsize(paths[name]) / 2**20:.1f} MB on disk"
        print(f"{name:8s} {best:6.2f} s  {best / times['jsonl']:5.2f}x JSON Lines  same records: "
              f"{records == reference}{size}")


if __name__ == "__main__":
    main()
