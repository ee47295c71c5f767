"""Test support of the unit tier (no tests here)."""
