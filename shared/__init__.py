"""Python code shared by the Lambda handlers: domain, protocol, services, adapters, runtime."""
