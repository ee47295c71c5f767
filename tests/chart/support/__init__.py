"""Test support of the chart tier (no tests here)."""
