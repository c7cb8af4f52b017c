"""Tests for the synthetic learner-error generator."""
