"""User-level release on the Enron sent-mail corpus (../shared/data/enron_sent; skipped where absent).

Each mailbox owner is one privacy unit: contributions are bounded to 200 e-mails per user and 500
tokens per e-mail, then gensim LDA is released with TopicDP at epsilon = 3, delta = 1e-4, gamma = 0.1.
There is no public corpus of other mailboxes here, so P resamples the private corpus (TopicDP's choice),
an explicit opt-in (``SensitivitySampling("private-oracle")``) whose report says what it leaks: sigma itself.

    python examples/enron_user_level.py [--quick] [--users N]
"""

import sys
import time
from pathlib import Path

from topicdp import Corpus, GensimLDA, TopicDP
from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling
from topicdp.metrics import l1_distance, rmse

PATH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "enron_sent" / "enron_sent.jsonl.gz"
if not PATH.exists():
    print(f"skipped: {PATH} is absent (the Enron corpus is not part of the repository)")
    sys.exit(0)

quick = "--quick" in sys.argv
n_users = int(sys.argv[sys.argv.index("--users") + 1]) if "--users" in sys.argv else (20 if quick else None)
corpus = Corpus.from_jsonl(PATH, min_df=5, max_df=0.5, max_features=2000)
if n_users is not None:
    corpus = corpus.subset_users(range(n_users))  # a documented subset: the first n users of the file
corpus = corpus.bound(max_docs_per_user=50 if quick else 200, max_tokens_per_doc=500)
print(corpus, corpus.log.lines())

model = GensimLDA(n_topics=10, random_state=0)
start = time.perf_counter()
sampling = SensitivitySampling(PRIVATE_ORACLE, 0.22 if quick else 0.1, random_state=0)
release = TopicDP(model, epsilon=3.0, delta=1e-4, unit="user", sampling=sampling, n_jobs=2).fit(
    corpus, keep_nonprivate=True
).release_
print(release.report.summary())
print(f"L1 {l1_distance(release.noisy, release.nonprivate):.3f}  RMSE {rmse(release.noisy, release.nonprivate):.5f}"
      f"  wall {time.perf_counter() - start:.1f} s")
