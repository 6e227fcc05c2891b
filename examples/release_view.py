"""An interactive HTML view of a DP release (LDAvis' map and term bars), from the published part only.

DP variational EM releases ten topics of a generated corpus (`topicdp.datasets.themed_corpus`) under
(3, 1e-6)-DP at the user level, with a public vocabulary; `topicdp.view.release_html` writes one
self-contained page (no network) that can be published with the release. The noise is seeded (seed 0), so
the picture is reproducible; the page says that a seeded release must not be published as private.

    python examples/release_view.py [--quick] [--out release_view.html] [--screenshot docs/release_view.png]

``--screenshot`` also renders the page with headless Chromium (``/usr/bin/chromium``) at 1200 x 800.
"""

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from topicdp.datasets import themed_corpus
from topicdp.variational import DPVariationalEM
from topicdp.view import release_html

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--quick", action="store_true", help="1,000 users instead of 2,000")
parser.add_argument("--out", default="release_view.html", help="the HTML file to write")
parser.add_argument("--screenshot", help="also write a PNG of the page (needs chromium)")
args = parser.parse_args()

corpus, truth = themed_corpus(n_users=1000 if args.quick else 2000)
model = DPVariationalEM(10, epsilon=3.0, delta=1e-6, unit="user", random_state=0)
release = model.fit(corpus).release_  # the themes' fixed word list is public, and so stated
print(release)  # the guarantee and the top words of each topic

release_html(release, args.out)
print(f"\nwrote {args.out}: open it in a browser (it works offline)")

if args.screenshot:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", f"--screenshot={args.screenshot}", "--window-size=1200,800",
                        Path(args.out).resolve().as_uri()], check=True, capture_output=True, timeout=120)
    print(f"wrote {args.screenshot}")
