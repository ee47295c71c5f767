"""Test support of the image tier (no tests here)."""
