"""Operator commands run by hand against a deployed table (``infra/RUNBOOK.md``): each a module
with a ``main`` (``python -m infra.operations.<name> --help``), built on the project's adapters
and boto3. Nothing here is deployed."""
