"""Two pytest runs' times, whole and on the tests both have: is the suite slower, or only larger?

Run each suite with ``python -m pytest -q -p no:cacheprovider --durations=0 > LOG`` (side by side, one per core,
in worktrees of the two commits), then::

    python benchmarks/refactors/compare_durations.py BEFORE.log AFTER.log

Prints each run's pytest summary line, the summed time (setup + call + teardown) of the tests present in both (same
node id) and their ratio, and the files whose shared tests grew most. pytest hides durations under 5 ms.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict


def read(path: str) -> tuple[dict, str]:
    """Seconds per node id, and the run's summary line."""
    seconds: dict = defaultdict(float)
    summary = "?"
    for line in open(path):
        match = re.match(r"\s*([\d.]+)s (setup|call|teardown)\s+(\S+)", line)
        if match:
            seconds[match.group(3)] += float(match.group(1))
        elif re.search(r"passed.* in [\d.]+s", line):
            summary = line.strip()
    return seconds, summary


def main(before_log: str, after_log: str) -> None:
    before, before_summary = read(before_log)
    after, after_summary = read(after_log)
    shared = set(before) & set(after)
    old, new = sum(before[k] for k in shared), sum(after[k] for k in shared)
    print(f"before: {before_summary}\nafter:  {after_summary}")
    print(f"tests in both: {len(shared)}; {old:.0f} s -> {new:.0f} s, ratio {new / old:.3f}")
    by_file: dict = defaultdict(lambda: [0.0, 0.0])
    for key in shared:
        name = key.split("::")[0]
        by_file[name][0] += before[key]
        by_file[name][1] += after[key]
    for name, (a, b) in sorted(by_file.items(), key=lambda item: item[1][0] - item[1][1])[:8]:
        print(f"  {name}: {a:.0f} -> {b:.0f} s")


if __name__ == "__main__":
    main(*sys.argv[1:3])
