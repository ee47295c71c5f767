"""Unit-tier fixtures: :class:`tests.support.fakeapi.FakeApi` finds the running test's
``httpx2_mock`` through this one."""

from tests.support.fakeapi import current_test

__all__ = ["current_test"]
