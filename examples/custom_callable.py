"""Wrap your own topic model as a callable and release it with TopicDP.

Any function ``corpus -> (K, V) array`` works, as long as it is deterministic (fix its seeds): here a
truncated SVD of the TF-IDF matrix whose absolute loadings are normalised into keyword weights.

    python examples/custom_callable.py [--quick]
"""

import sys

import numpy as np
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfTransformer

from topicdp import CallableModel, TopicDP, embedded_corpus
from topicdp.samplers import SensitivitySampling

K = 5


def tfidf_svd_topics(corpus):
    tfidf = TfidfTransformer().fit_transform(corpus.X)
    svd = TruncatedSVD(n_components=K, random_state=0, algorithm="arpack").fit(tfidf)
    weights = np.abs(svd.components_)
    return weights / weights.sum(axis=1, keepdims=True)


quick = "--quick" in sys.argv
lee = embedded_corpus()
# P must not look at the private data: the first 150 documents play the public reference
reference, corpus = lee.subset_documents(np.arange(150)), lee.subset_documents(np.arange(150, lee.n_docs))
model = CallableModel(tfidf_svd_topics, n_topics=K, name="tfidf-svd")
sampling = SensitivitySampling(distribution=reference, gamma=0.22 if quick else 0.1, random_state=0)
release = TopicDP(model, epsilon=5.0, delta=1e-5, sampling=sampling).fit(corpus).release_
for i, topic in enumerate(release.top_words(6)):
    print(f"topic {i}: {' '.join(word for word, _ in topic)}")
print(release.report.summary())
