"""Out-of-core corpora: documents read chunk by chunk from shards (JSON Lines, MatrixMarket, ``.npz``).

:class:`StreamingCorpus` gives the pass-only part of :class:`~topicdp.corpus.Corpus`' interface
(``vocabulary``, ``n_words``, ``iter_chunks()``, ``n_docs`` after a pass) over data that does not fit in
memory; :func:`map_reduce` runs one pass locally or as ``dask.distributed`` tasks over the shards.
The streaming spectral fit is :mod:`topicdp.spectral.streaming`.
"""

from .chunks import Chunk
from .corpus import StreamingCorpus, StreamLog, expand_paths
from .executor import add_partials, dask_client, map_reduce, share
from .readers import JsonlReader, MatrixMarketReader, MemoryReader, NpzReader, Shard, write_npz_shard
from .vocabulary import TokenCounts

__all__ = [
    "StreamingCorpus",
    "StreamLog",
    "Chunk",
    "Shard",
    "JsonlReader",
    "MatrixMarketReader",
    "NpzReader",
    "MemoryReader",
    "TokenCounts",
    "write_npz_shard",
    "map_reduce",
    "add_partials",
    "share",
    "dask_client",
    "expand_paths",
]
