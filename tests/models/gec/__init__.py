"""Tests for models/gec."""
