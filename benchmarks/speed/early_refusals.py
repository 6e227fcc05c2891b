"""How fast ``topicdp privatize`` refuses bad input on a large real corpus: every check that needs no private data
runs before the corpus is read, so a typo costs no reading time.

Each case runs the installed ``topicdp`` command as a fresh process on ``../shared/data/blogs/blogs.jsonl.gz``
(132,084 posts) and reports its wall time (median of ``--repeats`` runs), its exit status and the first words
of its message. Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/speed/early_refusals.py

Skips (exit 0, with a message) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS  # noqa: E402


def cases(words: Path, out_dir: Path) -> dict[str, list[str]]:
    return {
        "K above the vocabulary size asked for": ["--topics", "2500", "--max-features", "2000"],
        "K above a public word list's size": ["--topics", "2500", "--vocabulary", str(words)],
        "random-dp without a sampling distribution P": ["--guarantee", "random-dp"],
        "a spectral configuration without a stated count": ["--mechanism", "spectral-config-1"],
        "DP-SVI at user level": ["--mechanism", "dpsvi"],
        "document level with a per-user cap": ["--unit", "document", "--max-docs-per-user", "20"],
        "--secure-noise with dp-vem": ["--secure-noise", "--mechanism", "dp-vem"],
        "a vocabulary budget above the total": ["--vocabulary-epsilon", "4"],
        "epsilon 0": ["--epsilon", "0"],
        "delta 1": ["--delta", "1"],
        "--out in a missing directory": ["--out", str(out_dir / "missing" / "release.json")],
        "--user-fraction 0": ["--user-fraction", "0"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if not BLOGS.exists():
        print(f"skipped: {BLOGS} is absent")
        return 0
    command = [str(Path(sys.executable).with_name("topicdp")), "privatize", str(BLOGS)]
    with tempfile.TemporaryDirectory() as tmp:
        words = Path(tmp) / "words.txt"
        letters = "abcdefghijklmnopqrstuvwxyz"
        words.write_text("\n".join(f"w{a}{b}{c}" for a in letters for b in letters for c in letters[:3]) + "\n")
        print("| bad input | exit | median s | max s | message |\n|---|---|---|---|---|")
        for name, flags in cases(words, Path(tmp)).items():
            times, result = [], None
            for _ in range(args.repeats):
                start = time.perf_counter()
                result = subprocess.run(command + flags, capture_output=True, text=True)
                times.append(time.perf_counter() - start)
            assert result is not None
            message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "(none)"
            print(f"| {name} | {result.returncode} | {statistics.median(times):.2f} | {max(times):.2f} | "
                  f"{message[:110].replace('|', '/')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
