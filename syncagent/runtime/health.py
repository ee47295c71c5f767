"""Health state behind ``/healthz`` and ``/readyz``: named checks, each a zero-argument callable.

``/readyz`` passes when every readiness check passes (the agent registers "caches synced" and
"leadership decided"); ``/healthz`` when every liveness check does (none by default: serving
the request proves the event loop runs).
"""

from __future__ import annotations

from collections.abc import Callable

Check = Callable[[], bool]


class Health:
    def __init__(self) -> None:
        self._ready: dict[str, Check] = {}
        self._live: dict[str, Check] = {}

    def add_readiness(self, name: str, check: Check) -> None:
        self._ready[name] = check

    def add_liveness(self, name: str, check: Check) -> None:
        self._live[name] = check

    @staticmethod
    def _failing(checks: dict[str, Check]) -> list[str]:
        failing = []
        for name, check in checks.items():
            try:
                ok = check()
            except Exception:
                ok = False
            if not ok:
                failing.append(name)
        return failing

    def ready(self) -> tuple[bool, str]:
        return self._report(self._ready)

    def live(self) -> tuple[bool, str]:
        return self._report(self._live)

    def _report(self, checks: dict[str, Check]) -> tuple[bool, str]:
        failing = self._failing(checks)
        lines = [f"[{'-' if name in failing else '+'}]{name}" for name in checks]
        lines.append("ok" if not failing else f"failed: {', '.join(failing)}")
        return not failing, "\n".join(lines) + "\n"
