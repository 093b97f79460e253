"""``python -m tests.tools.mutation``: the whole mutation run and its report (see ``tool.main``)."""

from tests.tools.mutation.tool import main

raise SystemExit(main())
