"""Mutation testing of ``shared/domain`` and ``shared/services`` (mutmut): the run, its report
(``RESULTS.md``), the verdicts on what survives (``verdicts.toml``) and the CI smoke."""
