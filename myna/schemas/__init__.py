"""Stage 2: learn a service model (OpenAPI 3.1 with x-myna extensions) from traces."""

from myna.schemas.learn import learn
from myna.schemas.model import ServiceModel
from myna.schemas.openapi import load, save

__all__ = ["ServiceModel", "learn", "load", "save"]
