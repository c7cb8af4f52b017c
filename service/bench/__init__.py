"""Benchmarks: scripts that print a table and write JSON (speed never lives in unit tests)."""
