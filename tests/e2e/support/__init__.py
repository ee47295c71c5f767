"""Test support of the e2e tier (no tests here)."""
