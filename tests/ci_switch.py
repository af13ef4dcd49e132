"""The CI switch: under ``ESSENCE_REQUIRE_RESOURCES=1`` (``.ci/run`` sets it) a test skipped for a missing resource
(SmolLM2, Chromium, the harness logs, ...) fails instead, so CI cannot pass without them; only the deliberate skips
of :data:`DELIBERATE_SKIPS` stay skips. Not a test module; tests/conftest.py applies it to every report."""

from __future__ import annotations

import os

ENV = "ESSENCE_REQUIRE_RESOURCES"
#: skips that are a choice, not a missing resource
DELIBERATE_SKIPS = ("ESSENCE_NATIVE_CPU is set", "this CPU is below the pinned level")


def require_resources(rep) -> None:
    """Turn the skipped test report ``rep`` into a failure when the switch is on and its reason is not deliberate."""
    if not (rep.skipped and os.environ.get(ENV)) or hasattr(rep, "wasxfail"):
        return
    reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
    if not any(d in reason for d in DELIBERATE_SKIPS):
        rep.outcome = "failed"
        rep.longrepr = f"skipped, but {ENV}=1 requires what it needs: {reason}"
