"""Benchmarks of how fast: fits, the sensitivity sampler, scale, streaming, clusters, sources."""
