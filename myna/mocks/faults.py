"""Per-world fault injection: latency, error rates and rate limiting, deterministic under a seed.

Faults decide; they never sleep. `FaultState.decide` returns how long the answer should be delayed
and whether the request is refused (429 with Retry-After, or an injected error status), and the
HTTP shell or the in-process client does the waiting. Each world draws from its own
`random.Random(seed)`, so the same seed and the same request order give the same faults.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from myna.mocks.rejection import Rejection

Distribution = Literal["fixed", "uniform", "normal", "exponential"]


class Latency(BaseModel):
    """Added response time in milliseconds: fixed, uniform on mean±spread, normal (spread is
    the standard deviation, clipped at 0) or exponential with the given mean."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    distribution: Distribution = "fixed"
    mean_ms: float = Field(default=0.0, ge=0.0, le=60_000.0)
    spread_ms: float = Field(default=0.0, ge=0.0, le=60_000.0)


class RateLimit(BaseModel):
    """At most `requests` per fixed window of `per_seconds`; beyond that 429 with Retry-After."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int = Field(ge=1)
    per_seconds: float = Field(default=1.0, gt=0.0)


class FaultConfig(BaseModel):
    """The faults of one world, as the admin API takes them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency: Latency | None = None
    error_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    error_status: int = Field(default=503, ge=400, le=599)
    rate_limit: RateLimit | None = None
    seed: int = 0


@dataclass(frozen=True, slots=True)
class FaultDecision:
    delay: float  # seconds
    rejection: Rejection | None


NO_FAULT = FaultDecision(0.0, None)


class FaultState:
    """One world's faults and the random stream and rate window they draw from."""

    def __init__(self, config: FaultConfig) -> None:
        self.config = config
        self._random = random.Random(config.seed)
        self._window_start = -math.inf
        self._window_count = 0
        self._lock = threading.Lock()

    def decide(self, now: float) -> FaultDecision:
        config = self.config
        with self._lock:
            delay = self._delay()
            limit = config.rate_limit
            if limit is not None:
                if now - self._window_start >= limit.per_seconds:
                    self._window_start = now
                    self._window_count = 0
                self._window_count += 1
                if self._window_count > limit.requests:
                    retry_after = max(1, math.ceil(self._window_start + limit.per_seconds - now))
                    return FaultDecision(
                        delay,
                        Rejection(
                            429,
                            f"rate limit of {limit.requests} requests per "
                            f"{limit.per_seconds:g} s exceeded",
                            headers=(("Retry-After", str(retry_after)),),
                        ),
                    )
            if config.error_rate and self._random.random() < config.error_rate:
                return FaultDecision(
                    delay, Rejection(config.error_status, "injected fault: the service failed")
                )
        return FaultDecision(delay, None)

    def _delay(self) -> float:
        latency = self.config.latency
        if latency is None:
            return 0.0
        mean, spread = latency.mean_ms, latency.spread_ms
        if latency.distribution == "fixed":
            ms = mean
        elif latency.distribution == "uniform":
            ms = self._random.uniform(max(0.0, mean - spread), mean + spread)
        elif latency.distribution == "normal":
            ms = max(0.0, self._random.gauss(mean, spread))
        else:
            ms = self._random.expovariate(1.0 / mean) if mean > 0 else 0.0
        return ms / 1000.0
