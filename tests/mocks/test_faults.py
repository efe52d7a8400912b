"""Per-world faults: rate limits with Retry-After, error rates and latency, repeatable by seed."""

from __future__ import annotations

import base64

import pytest

from myna.mocks import Mock, MockClient, MockRequest
from myna.mocks.faults import FaultConfig, FaultState, Latency, RateLimit
from tests.mocks.conftest import ADMIN_TOKEN, TABLE, USER, build_mock

INCIDENTS = f"{TABLE}/incident"
ADMIN = "/_myna/admin"


class TestFaultState:
    def test_rate_limit_refuses_beyond_the_window_then_recovers(self) -> None:
        state = FaultState(FaultConfig(rate_limit=RateLimit(requests=2, per_seconds=10)))

        decisions = [state.decide(now) for now in (100.0, 101.0, 102.5, 110.0)]

        refused = [d.rejection is not None for d in decisions]
        assert refused == [False, False, True, False]
        rejection = decisions[2].rejection
        assert rejection is not None
        assert (rejection.status, dict(rejection.headers)["Retry-After"]) == (429, "8")

    def test_error_rate_is_repeatable_under_a_seed(self) -> None:
        def pattern(seed: int) -> list[bool]:
            state = FaultState(FaultConfig(error_rate=0.3, seed=seed))
            return [state.decide(0.0).rejection is not None for _ in range(200)]

        assert pattern(1) == pattern(1)
        assert pattern(1) != pattern(2)
        assert 30 <= sum(pattern(1)) <= 90

    @pytest.mark.parametrize(
        ("latency", "low", "high"),
        [
            (Latency(distribution="fixed", mean_ms=40), 0.040, 0.040),
            (Latency(distribution="uniform", mean_ms=50, spread_ms=10), 0.040, 0.060),
            (Latency(distribution="normal", mean_ms=5, spread_ms=50), 0.0, 1.0),
            (Latency(distribution="exponential", mean_ms=20), 0.0, 1.0),
        ],
        ids=["fixed", "uniform", "normal-clipped-at-zero", "exponential"],
    )
    def test_latency_stays_within_its_distribution(
        self, latency: Latency, low: float, high: float
    ) -> None:
        state = FaultState(FaultConfig(latency=latency, seed=5))

        again = FaultState(FaultConfig(latency=latency, seed=5))

        delays = [state.decide(0.0).delay for _ in range(300)]

        assert all(low <= delay <= high for delay in delays)
        assert delays == [again.decide(0.0).delay for _ in range(300)]


class TestThroughTheApi:
    @pytest.fixture
    def ticking(self) -> tuple[Mock, list[float]]:
        now = [1000.0]
        mock = build_mock()
        mock.clock = lambda: now[0]
        return mock, now

    def test_faults_apply_to_one_world_only(self, ticking: tuple[Mock, list[float]]) -> None:
        mock, now = ticking
        admin = MockClient(mock, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        admin.post(f"{ADMIN}/worlds", json={"id": "limited"})
        limit = {"rate_limit": {"requests": 1, "per_seconds": 60}}
        assert admin.put(f"{ADMIN}/worlds/limited/faults", json=limit).status == 200
        limited = MockClient(mock, auth=USER, world="limited")
        free = MockClient(mock, auth=USER)

        assert limited.get(INCIDENTS).status == 200
        refused = limited.get(INCIDENTS)
        assert [free.get(INCIDENTS).status for _ in range(3)] == [200, 200, 200]

        assert refused.status == 429
        assert refused.header("Retry-After") == "60"
        assert refused.json()["status"] == "failure"  # the service's own error shape
        now[0] += 60
        assert limited.get(INCIDENTS).status == 200

    def test_injected_errors_write_nothing(
        self, mock: Mock, admin: MockClient, client: MockClient
    ) -> None:
        admin.put(f"{ADMIN}/worlds/default/faults", json={"error_rate": 1.0, "error_status": 503})

        response = client.post(INCIDENTS, json={"short_description": "lost"})

        assert response.status == 503
        assert admin.delete(f"{ADMIN}/worlds/default/faults").status == 204
        assert client.get(INCIDENTS).header("X-Total-Count") == "0"

    def test_latency_is_reported_to_the_shell(self, admin: MockClient, mock: Mock) -> None:
        faults = {"latency": {"distribution": "fixed", "mean_ms": 1}}
        admin.put(f"{ADMIN}/worlds/default/faults", json=faults)

        token = base64.b64encode(":".join(USER).encode()).decode()
        request = MockRequest("GET", INCIDENTS, headers={"authorization": f"Basic {token}"})

        response = mock.handle(request)

        assert response.status == 200
        assert response.delay == pytest.approx(0.001)

    @pytest.mark.parametrize(
        "body",
        [
            {"error_rate": 2},
            {"latency": {"distribution": "pareto"}},
            {"rate_limit": {"requests": 0}},
            {"x": 1},
        ],
        ids=["rate-above-one", "unknown-distribution", "zero-requests", "unknown-field"],
    )
    def test_bad_fault_configs_are_400(self, admin: MockClient, body: dict[str, object]) -> None:
        response = admin.put(f"{ADMIN}/worlds/default/faults", json=body)

        assert response.status == 400
        assert response.json()["error"]["kind"] == "invalid_request"
