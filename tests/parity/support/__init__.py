"""Test support of the parity tier (no tests here)."""
