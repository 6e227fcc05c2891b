"""What a user reads: the first screen of the README's commands, as run, at both units on blog posts.

Each command runs as a user would type it (``topicdp privatize ...``, stdout and stderr as one terminal shows
them), on the code in ``--code`` (default: this checkout; a worktree of an older commit for the "before"
column). The first screen (``--lines``, default 30) is kept, and two things are checked on the whole output:
whether the certified guarantee (or the refusal and what it spent) is said before the topics and the report, and
every epsilon printed above the request, with the words that label it.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/transcripts.py --out after.md
    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/transcripts.py --code /tmp/before --out before.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS, ROOT  # noqa: E402

#: (title, arguments after ``topicdp``); the README's command at both units, on 30% of the bloggers (by a hash of
#: the user id) so that a run takes a minute or two
COMMANDS = (
    ("user level (the README's command)", ["privatize", str(BLOGS), "--topics", "10", "--epsilon", "3",
                                            "--user-fraction", "0.3", "--out", "{tmp}/user.json", "--seed", "0"]),
    ("document level", ["privatize", str(BLOGS), "--topics", "10", "--epsilon", "3", "--unit", "document",
                        "--user-fraction", "0.3", "--out", "{tmp}/document.json", "--seed", "0"]),
    ("document level, forced where refused", ["privatize", str(BLOGS), "--topics", "10", "--epsilon", "3", "--unit",
                                              "document", "--user-fraction", "0.3", "--out", "{tmp}/forced.json",
                                              "--seed", "0", "--release-anyway"]),
)
#: an epsilon as the output prints one: "epsilon 3.05", "epsilon=0.6", or the first of a guarantee's "(2.85, 1e-06)"
EPSILON = re.compile(r"epsilon[ =]+(\d+(?:\.\d+)?)|\((\d+(?:\.\d+)?), \d")


def run(code: Path, args: list[str], tmp: str) -> tuple[int, list[str]]:
    # unbuffered, both streams into one pipe: the lines in the order a terminal shows them
    env = {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "topicdp.cli", *[a.format(tmp=tmp) for a in args]]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp,
                          timeout=3600)
    return proc.returncode, proc.stdout.splitlines()


def above_request(lines: list[str], requested: float) -> list[tuple[int, str]]:
    """(index, line) of each line that prints an epsilon above the request."""
    return [(i, line.strip()) for i, line in enumerate(lines)
            if any(float(a or b) > requested * (1 + 1e-9) for a, b in EPSILON.findall(line))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose topicdp runs")
    parser.add_argument("--lines", type=int, default=30, help="lines of a first screen")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if not BLOGS.exists():
        print(f"skipped: {BLOGS} is absent")
        return 0
    out = [f"# First screens of `topicdp` on blog posts ({args.code.resolve().name})", ""]
    for title, command in COMMANDS:
        with tempfile.TemporaryDirectory() as tmp:
            code, lines = run(args.code.resolve(), command, tmp)
        shown = " ".join(a.format(tmp=".") for a in command).replace(str(BLOGS), "blogs.jsonl.gz")
        headline = next((i for i, line in enumerate(lines) if line.startswith(("released:", "guarantee"))), None)
        refusal = next((i for i, line in enumerate(lines) if "refused" in line or "error" in line), None)
        out += [f"## {title}", "", f"    topicdp {shown}    # exit status {code}", "", "```",
                *lines[:args.lines], *(["..."] if len(lines) > args.lines else []), "```", ""]
        where = (f"the certified guarantee on line {headline + 1}" if headline is not None else
                 f"no guarantee line; the refusal on line {refusal + 1}" if refusal is not None else "neither")
        out += [f"- first statement of what was guaranteed: {where} of {len(lines)}"]
        high = above_request(lines, 3.0)
        looser = next((i for i, line in enumerate(lines) if line.startswith("looser accounts")), len(lines))
        out += [f"- lines printing an epsilon above the requested 3: {len(high)}"]
        out += [f"  - `{line}`" + (" (under 'looser accounts, for comparison (not used)')" if i > looser else
                                    " (NOT labelled as a looser account)") for i, line in high]
        start = next((i for i, line in enumerate(lines) if line.startswith("released:")), None)
        if start is not None:  # the release's own lines: the guarantee and the topics
            out += ["", "The release's headline and topics:", "", "```", *lines[start:start + 12], "```"]
        out.append("")
    args.out.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
