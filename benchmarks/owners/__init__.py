"""Benchmarks of what a data owner sees: transcripts of the commands, the newcomer's release, compare."""
