"""The mutation set-up still works: a seeded sample of mutants of one small module is run by
mutmut with the repository's own configuration, and the tests kill them (``tests.tools.mutation``).

The whole run is not part of CI (about 30 minutes on two cores): ``python -m tests.tools.mutation``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.mutation.tool import smoke

pytestmark = pytest.mark.slow


def test_a_seeded_sample_of_mutants_is_run_and_killed(tmp_path: Path) -> None:
    statuses = smoke(tmp_path, sample=6, seed=20)
    assert len(statuses) == 6
    assert "not checked" not in statuses.values(), statuses
    killed = [name for name, status in statuses.items() if status in ("killed", "timeout")]
    # the scoring rules are pinned by their tests: most of a sample dies, and at least one must
    assert len(killed) >= 3, statuses


def test_a_module_with_too_few_mutants_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fewer than"):
        smoke(tmp_path, module="shared/domain/__init__.py", sample=1)
