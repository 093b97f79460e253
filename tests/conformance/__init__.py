"""Tests support: the recorder of the protocol's conformance kit (shared/protocol/conformance)."""
