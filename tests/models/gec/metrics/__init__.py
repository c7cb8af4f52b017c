"""Tests for models/gec/metrics."""
