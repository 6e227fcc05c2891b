"""An (epsilon, delta)-DP release that a person can read, on a generated corpus with known topics.

2,000 users write 5 documents each from ten topics of real English words (`topicdp.datasets.themed_corpus`;
generated, not real text, so that the truth is known). DP variational EM releases the topics at the user
level at epsilon = 3, delta = 1e-6, once from a random start and once from topics fitted on 500 other users
of the same kind, treated as public. Each release prints its matched top-10 overlap with the generating
topics (0 = unrelated, 1 = identical).

    python examples/dp_release_generated.py [--quick]     # about 15 s
"""

import sys

from topicdp.datasets import themed_corpus
from topicdp.metrics import topic_overlap
from topicdp.variational import DPVariationalEM
from topicdp.forecast import public_init

quick = "--quick" in sys.argv
corpus, truth = themed_corpus(n_users=1000 if quick else 2000, random_state=0)
public, _ = themed_corpus(n_users=500, random_state=1)  # other users of the same kind, treated as public

for start, init, iterations in (("random start", None, 5), ("public start", public_init(public, 10), 2)):
    model = DPVariationalEM(10, epsilon=3.0, delta=1e-6, unit="user", n_iterations=iterations, init=init)
    release = model.fit(corpus).release_  # the corpus' words are the themes' fixed list: public, and so stated
    print(f"\n{start}: overlap with the generating topics {topic_overlap(release.topic_word, truth):.2f}")
    for i, topic in enumerate(release.top_words(8)):
        print(f"  topic {i}: {' '.join(word for word, _ in topic)}")
print("\n" + release.report.summary())
