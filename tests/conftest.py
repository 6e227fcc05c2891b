import os
from pathlib import Path

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ENRON = SHARED / "data" / "enron_sent" / "enron_sent.jsonl.gz"


@pytest.fixture(scope="session")
def lee_corpus():
    from topicdp.corpus import embedded_corpus

    return embedded_corpus()


@pytest.fixture(scope="session")
def enron_path():
    if not ENRON.exists():
        pytest.skip("../shared/data/enron_sent is absent")
    return ENRON
