"""Shared fixtures: a small incident world and an episode that resolves one incident; the
shipped sample failure logs built on the built-in ITSM back end."""

from __future__ import annotations

from typing import Any

import pytest

from myna.replay.build import Builder, BuildReport, build
from myna.replay.episode import (
    AllowedChange,
    CallPattern,
    Environment,
    Episode,
    FieldEquals,
    HttpStep,
    ModelRef,
    NoCollateral,
    Policy,
    Problem,
    Provenance,
    Solution,
    TextCheck,
    Verifier,
)
from myna.replay.mock_world import MockWorlds, ToolboxTranslator
from myna.replay.sample_logs import failure_sessions
from myna.schemas.model import ServiceModel

A1 = "a" * 32
A2 = "b" * 32
U1 = "c" * 32


def incident_world() -> dict[str, list[dict[str, Any]]]:
    return {
        "incident": [
            {
                "sys_id": A1,
                "number": "INC0010001",
                "state": "2",
                "short_description": "Email down",
                "close_code": "",
                "close_notes": "",
                "assigned_to": "",
            },
            {
                "sys_id": A2,
                "number": "INC0010002",
                "state": "2",
                "short_description": "VPN drops",
                "close_code": "",
                "close_notes": "",
                "assigned_to": {"link": "x", "value": U1},
            },
        ],
        "sys_user": [{"sys_id": U1, "user_name": "beth.anglin", "name": "Beth Anglin"}],
    }


def resolve_episode() -> Episode:
    target = {"number": "INC0010002"}
    return Episode(
        id="resolve-inc0010002",
        problem=Problem(instruction="Resolve INC0010002: the VPN concentrator was restarted."),
        environment=Environment(
            model=ModelRef(name="fake-itsm"),
            initial_world=incident_world(),
            id_fields={"incident": "sys_id", "sys_user": "sys_id"},
            tools=[],
        ),
        verifier=Verifier(
            checks=[
                FieldEquals(
                    name="resolved",
                    resource="incident",
                    where=target,
                    field="state",
                    value="6",
                    weight=2,
                ),
                FieldEquals(
                    name="close code",
                    resource="incident",
                    where=target,
                    field="close_code",
                    value="Solved (Permanently)",
                ),
                TextCheck(
                    name="close notes",
                    resource="incident",
                    where=target,
                    field="close_notes",
                    mentions=[["restart", "reboot"]],
                ),
                NoCollateral(
                    name="nothing else",
                    allowed=[
                        AllowedChange(
                            resource="incident",
                            record_id=A2,
                            fields=["state", "close_code", "close_notes"],
                        )
                    ],
                ),
                Policy(name="policy", forbidden=[CallPattern(method="DELETE", path="*")]),
            ]
        ),
        reference=Solution(
            steps=[
                HttpStep(
                    method="PATCH",
                    path=f"/api/now/table/incident/{A2}",
                    body={
                        "state": "6",
                        "close_code": "Solved (Permanently)",
                        "close_notes": "Restarted the VPN concentrator; tunnels hold again.",
                    },
                )
            ]
        ),
        provenance=Provenance(
            source_session="s-1",
            step_index=3,
            failure_class="constraint_violation",
            failing_calls=[
                HttpStep(method="PATCH", path=f"/api/now/table/incident/{A2}", body={"state": "6"})
            ],
        ),
    )


@pytest.fixture
def episode() -> Episode:
    return resolve_episode()


def build_samples_on_itsm(variants: int) -> tuple[ServiceModel, MockWorlds, BuildReport]:
    """The shipped failure logs built into episodes on the built-in ITSM back end."""
    from myna.backends import builtin_model

    itsm = builtin_model("itsm")
    worlds = MockWorlds(itsm)
    builder = Builder(
        model=itsm,
        factory=worlds,
        model_ref=ModelRef(name="itsm"),
        tools=tuple(ToolboxTranslator(itsm).names()),
    )
    return itsm, worlds, build(failure_sessions(), builder, variants=variants)
