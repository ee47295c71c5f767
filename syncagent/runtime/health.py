"""Health state behind ``/healthz`` and ``/readyz``: named checks, each a zero-argument callable.

``/readyz`` passes when every readiness check passes (the agent registers "caches synced" and
"leadership decided"); ``/healthz`` when every liveness check does (none by default: serving
the request proves the event loop runs). A check returns True (passes), False (fails), or a
text: empty when it passes, else what fails (``[-]caches: <the watches not synced>``), so the
probe's answer names the stuck scope.
"""

from __future__ import annotations

from collections.abc import Callable

Check = Callable[[], bool | str]


class Health:
    def __init__(self) -> None:
        self._ready: dict[str, Check] = {}
        self._live: dict[str, Check] = {}

    def add_readiness(self, name: str, check: Check) -> None:
        self._ready[name] = check

    def add_liveness(self, name: str, check: Check) -> None:
        self._live[name] = check

    @staticmethod
    def _failing(checks: dict[str, Check]) -> dict[str, str]:
        """The failing checks, each with what fails ("" when the check does not say)."""
        failing: dict[str, str] = {}
        for name, check in checks.items():
            try:
                outcome = check()
            except Exception as err:
                outcome = False if not str(err) else str(err)
            if isinstance(outcome, str) and outcome:
                failing[name] = outcome
            elif outcome is False:
                failing[name] = ""
        return failing

    def ready(self) -> tuple[bool, str]:
        return self._report(self._ready)

    def live(self) -> tuple[bool, str]:
        return self._report(self._live)

    def _report(self, checks: dict[str, Check]) -> tuple[bool, str]:
        failing = self._failing(checks)
        lines = [
            f"[-]{name}: {failing[name]}"
            if failing.get(name)
            else f"[{'-' if name in failing else '+'}]{name}"
            for name in checks
        ]
        lines.append("ok" if not failing else f"failed: {', '.join(failing)}")
        return not failing, "\n".join(lines) + "\n"
