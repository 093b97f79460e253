"""The test suite (layout and lanes: ``tests/README.md``)."""
