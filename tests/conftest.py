"""Hypothesis in CI (the CI variable set, as .ci/run does): the same examples on every run, so that
whether a commit lands never depends on the draw. Elsewhere each run draws new examples, which is how
the fuzz tests find what they find (tests/test_reliability.py has one, kept as a fixed test)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
