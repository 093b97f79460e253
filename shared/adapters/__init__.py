"""Adapters layer: the only code that talks to AWS (DynamoDB, API Gateway Management API,
Step Functions). Each adapter accepts an injected boto3 client."""
