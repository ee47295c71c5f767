"""Test support shared by several tiers (no tests here); each tier's own is in ``<tier>/support``."""
