"""Release gensim LDA topics of the embedded Lee news corpus with TopicDP (one document per user).

The sampled sensitivity needs a sampling distribution P that does not look at the private data: here the
first 150 Lee documents play the public reference and the other 150 the private corpus (same vocabulary).

    python examples/gensim_lda_embedded.py            # gamma = 0.1, exchangeable sizing: 9 pairs, ~10 s
    python examples/gensim_lda_embedded.py --quick    # gamma = 0.22: 4 pairs, a few seconds

Exchangeable sizing makes a statement marginal over the sensitivity sample and the neighbouring pair
(TopicDP's Lambert-W sizing, 285 pairs at gamma = 0.1, conditions on the sample; `SensitivitySampling(sizing="lambert-w")`).
With 150 documents no mechanism keeps LDA's topics: the overlap printed at the end shows it (about chance).
A release that works needs thousands of units: see examples/dp_release_generated.py and docs/results/.
"""

import sys

import numpy as np

from topicdp import GensimLDA, TopicDP, embedded_corpus
from topicdp.samplers import SensitivitySampling
from topicdp.metrics import l1_distance, rmse, topic_overlap

quick = "--quick" in sys.argv
lee = embedded_corpus()
reference, corpus = lee.subset_documents(np.arange(150)), lee.subset_documents(np.arange(150, lee.n_docs))
model = GensimLDA(n_topics=10, random_state=0, passes=2)
sampling = SensitivitySampling(distribution=reference, gamma=0.22 if quick else 0.1, sizing="exchangeable",
                               random_state=0)
privatizer = TopicDP(model, epsilon=3.0, delta=1e-4, sampling=sampling, n_jobs=2)
release = privatizer.fit(corpus, keep_nonprivate=True).release_

for i, topic in enumerate(release.top_words(8)):
    print(f"topic {i}: {' '.join(word for word, _ in topic)}")
print(release.report.summary())
print(f"L1 distance to the non-private matrix: {l1_distance(release.noisy, release.nonprivate):.3f}")
print(f"RMSE: {rmse(release.noisy, release.nonprivate):.5f}")
print(f"matched top-10 overlap with the non-private topics: {topic_overlap(release.topic_word, release.nonprivate):.2f}")
assert np.allclose(release.topic_word.sum(axis=1), 1.0)
