"""Benchmarks: the real agentls server, driven over LSP, against a naive agent loop.

Run from the repository root with `python -m bench` (`--quick` for a short run); see the
README's Performance section.
"""
