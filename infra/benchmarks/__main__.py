"""``python -m infra.benchmarks`` (see ``infra.benchmarks.run``)."""

from infra.benchmarks.run import main

raise SystemExit(main())
