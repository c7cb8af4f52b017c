"""Tests for models/ (build-time code)."""
