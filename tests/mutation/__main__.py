"""``python -m tests.mutation``: the whole mutation run and its report (see ``tool.main``)."""

from tests.mutation.tool import main

raise SystemExit(main())
