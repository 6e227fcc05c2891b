"""Benchmarks of how readable the released topics are, and how well the plan foresees it."""
