"""Out-of-core corpora: documents read chunk by chunk from shards (JSON Lines, ``.npz``). :class:`StreamingCorpus`
gives the pass-only part of :class:`~topicdp.corpus.Corpus`' interface; :func:`map_reduce` runs a pass locally or
as ``dask.distributed`` tasks (the dp-vem passes over count shards)."""

from .corpus import StreamingCorpus, StreamLog, expand_paths
from .executor import add_partials, dask_client, map_reduce, share
from .readers import Chunk, JsonlReader, NpzReader, Shard, TokenCounts, write_npz_shard

__all__ = [
    "StreamingCorpus", "StreamLog", "Chunk", "Shard", "JsonlReader", "NpzReader", "TokenCounts",
    "write_npz_shard", "map_reduce", "add_partials", "share", "dask_client", "expand_paths"
]
