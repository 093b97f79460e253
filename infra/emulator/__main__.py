"""Local runtime entry point: ``python -m infra.emulator --help``."""

import sys

from infra.emulator.cli import main

sys.exit(main())
