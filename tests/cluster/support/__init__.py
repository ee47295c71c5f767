"""Test support of the cluster tier (no tests here)."""
