"""Stage 2: learn a service model (OpenAPI 3.1 with x-myna extensions) from traces."""
