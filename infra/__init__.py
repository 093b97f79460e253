"""Infrastructure: the CDK app and constructs, and the local runtime (``infra.emulator``)."""
