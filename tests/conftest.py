"""Test configuration: the local runtime's harness fixtures (``backend``) for every test, and
Hypothesis without its per-example deadline.

Hypothesis fails an example that runs longer than 200 ms by default (``settings.deadline``), a
timing assertion: on a loaded machine (the suite runs on every core) a first call that loads a
word list can pass it and fail the run. Tests here assert behaviour, never time (benchmarks
measure), so the deadline is off for every property test; ``max_examples`` stays per test.
"""

from hypothesis import settings

pytest_plugins = ["infra.emulator.testing"]

settings.register_profile("behaviour", deadline=None)
settings.load_profile("behaviour")
