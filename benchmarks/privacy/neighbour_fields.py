"""Count what neighbouring corpora publish differently, apart from DP outputs, for every mechanism of the registry.

For each (mechanism, unit, neighbour relation) the registry supports, a small corpus and its neighbours (a unit
added, removed, or replaced by out-of-vocabulary, 2-token or empty texts) are released with ``topicdp privatize``
and the same noise seed; the DP count (add/remove) is pinned to one value, the count is stated under
replace-one. Printed: per row, the exit statuses, and the number of published fields whose status is not DP or
post-processing that differ, and of printed lines that differ (the released top words and the wall time aside).
The neighbour contract test (tests/test_neighbour_contract.py) asserts 0 for both; this script measures it on any
checkout, e.g. an older commit:

    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/neighbour_fields.py
    git worktree add /tmp/old <commit> && OPENBLAS_NUM_THREADS=1 PYTHONPATH=/tmp/old python benchmarks/privacy/neighbour_fields.py
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

WORDS = [f"w{a}{b}" for a in "abcdefghij" for b in "abcdefghijklmnopqrst"]
SPECTRAL_WORDS = WORDS[:10] + WORDS[100:110]
REPLACEMENTS = {"replace-oov": "zzqa zzqb zzqc zzqd zzqe zzqf", "replace-short": "wab wac", "replace-empty": ""}
KINDS = {"add-remove": ("add", "remove", *REPLACEMENTS), "replace-one": tuple(REPLACEMENTS)}


def corpus(unit: str, spectral: bool) -> list[tuple[str, str]]:
    rng = np.random.default_rng(0)
    n = 200 if spectral else 60
    per_user = 3 if unit == "user" else 4
    n_docs = n * per_user if unit == "user" else n
    blocks = (WORDS[:5], WORDS[100:105]) if spectral else (WORDS[:100], WORDS[100:])
    return [(f"u{d // per_user:04d}", " ".join(rng.choice(blocks[0] if rng.random() < 0.5 else blocks[1], 25)))
            for d in range(n_docs)]


def neighbour(records, kind: str, unit: str):
    if kind == "remove":
        last = records[-1][0]
        return records[:-1] if unit == "document" else [r for r in records if r[0] != last]
    if kind == "add":
        return records + [("u9999", " ".join(WORDS[:25]))] * (1 if unit == "document" else 3)
    first, text = records[0][0], REPLACEMENTS[kind]
    if unit == "document":
        return [(first, text)] + records[1:]
    return [(u, text if u == first else t) for u, t in records]


def run(root: Path, records, flags) -> tuple[int, list[str], dict]:
    from topicdp.cli import main

    path = root / "corpus.jsonl"
    path.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in records))
    out = root / "release.json"
    out.unlink(missing_ok=True)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(["privatize", str(path), "--seed", "3", "--out", str(out), *map(str, flags)])
    published = json.loads(out.read_text()) if out.exists() else None
    return code, printed(buffer.getvalue(), published), published


#: the report's printed lines that show one published field: (label at the line's start, the field)
PRINTED_FIELDS = (("sensitivity ", "report.sensitivity"), ("sigma ", "report.sigma"), ("  FAILED ", "report.checks"))


def printed(text: str, published) -> list[str]:
    """The printed lines but the released top words and the wall time; the figures of a line showing a DP or
    post-processing field (e.g. a sensitivity given the released M2) masked."""
    statuses = published["report"]["published"] if published else {}
    masked = tuple(label for label, field in PRINTED_FIELDS
                   if statuses.get(field, "").startswith(("DP", "post-processing")))
    lines, skipping = [], False
    for line in text.splitlines():
        if line.startswith("top words of the release"):
            skipping = True
        elif skipping and not line.strip():
            skipping = False
        elif not skipping and not line.startswith("wall time"):
            lines.append(re.sub(r"\d[\d.e+-]*", "#", line) if masked and line.startswith(masked) else line)
    return lines


def non_dp_fields(published) -> dict:
    from topicdp.private_release import published_paths, status_of

    if published is None:
        return {}
    statuses = {"format": "public", "top_words": "post-processing", **published["report"]["published"]}
    paths = {p: v for p, v in published_paths(published).items() if v not in (None, {}, [])}
    return {p: v for p, v in paths.items()
            if not (status_of(p, statuses) or "unlisted").startswith(("DP", "post-processing"))}


def main() -> int:
    import topicdp.pipeline.run as run_module
    from topicdp.pipeline import MECHANISMS

    run_module.gaussian_count = lambda n, sigma, rng: 321.0  # condition on the DP count (add/remove)
    print("| mechanism | unit | neighbours | neighbour | exit | differing non-DP fields | differing printed lines |")
    print("|---|---|---|---|---|---|---|")
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "words.txt").write_text("\n".join(WORDS) + "\n")
        (root / "spectral.txt").write_text("\n".join(SPECTRAL_WORDS) + "\n")
        for name, row in MECHANISMS.items():
            spectral = name.startswith("spectral")
            for unit in row.units:
                for relation in row.neighbours:
                    flags = ["--mechanism", name, "--unit", unit, "--topics", 2, "--release-anyway",
                             "--vocabulary", root / ("spectral.txt" if spectral else "words.txt"),
                             "--epsilon", 200 if spectral else 2]
                    if name in ("gaussian-global", "laplace"):
                        flags += ["--model", "sklearn-nmf"]
                    if relation == "replace-one":
                        flags += ["--n-units", 200 if spectral else 60]
                    records = corpus(unit, spectral)
                    a = run(root, records, flags)
                    for kind in KINDS[relation]:
                        b = run(root, neighbour(records, kind, unit), flags)
                        fa, fb = non_dp_fields(a[2]), non_dp_fields(b[2])
                        fields = sum(fa.get(p) != fb.get(p) for p in set(fa) | set(fb))
                        lines = sum(x != y for x, y in zip(a[1], b[1])) + abs(len(a[1]) - len(b[1]))
                        total += fields + lines
                        print(f"| {name} | {unit} | {relation} | {kind} | {a[0]}/{b[0]} | {fields} | {lines} |")
                        sys.stdout.flush()
    print(f"\ntotal differing fields and lines: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
