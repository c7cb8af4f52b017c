"""Test suite for gecserve."""
