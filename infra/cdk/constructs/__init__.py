"""Infrastructure: one CDK construct per capability (table, functions, WebSocket API, clock,
monitoring); ``infra.cdk.stack`` only composes them."""
