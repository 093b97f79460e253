"""Benchmarks (never deployed, never part of the test run): one command measures AWS calls per
action, cold imports, cost per tournament and local capacity, prints a table and writes
``infra/benchmarks/RESULTS.md``.

    python -m infra.benchmarks [--quick] [--out PATH] [--only calls,items,layers,cold,cost,capacity]

Modules, one per figure: ``calls`` (1, with ``units`` for DynamoDB capacity rules), ``items``
(1b), ``layers`` (1c: CPU per action by layer against the botocore floor), ``cold`` (2),
``cost`` (3: the bill, composed from ``play``, the tournament played, ``clocks``, the clock
designs measured and modelled, and ``prices``, ``prices.json`` and the billing arithmetic),
``capacity`` (4), ``memory`` (3b: each function's memory against its cost), ``storage``
(3c: bytes per player and per tournament, growth), ``progression`` (3d: what issue 38's
history, boards and read actions add per tournament; alone: ``python -m
infra.benchmarks.progression --write``); ``run`` composes them and writes
``results.json``, from which ``figures`` (``python -m infra.benchmarks.figures --write``)
rewrites the figures quoted in the docs. Apart:
``word_lists``, each language's cold load time (``python -m infra.benchmarks.word_lists``).
"""
