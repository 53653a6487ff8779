"""Benchmarks: the real agentls server, driven over LSP, against a naive agent loop.

Run from the repository root with `python -m bench` (`--quick` for a short run); the table of a full
run and how each figure is made are in docs/performance.md.
"""
