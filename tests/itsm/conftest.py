from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from myna.itsm.bench import default_data, itsm_model
from myna.itsm.importers import IncidentHistory, import_history
from myna.schemas.model import ServiceModel

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "datasets"

UCI_HEADER = (
    "number,incident_state,active,reassignment_count,reopen_count,sys_mod_count,made_sla,"
    "caller_id,opened_by,opened_at,sys_created_by,sys_created_at,sys_updated_by,sys_updated_at,"
    "contact_type,location,category,subcategory,u_symptom,cmdb_ci,impact,urgency,priority,"
    "assignment_group,assigned_to,knowledge,u_priority_confirmation,notify,problem_id,rfc,vendor,"
    "caused_by,closed_code,resolved_by,resolved_at,closed_at"
)


def corpus_file(relative: str) -> Path:
    path = CORPUS / relative
    if not path.is_file():
        pytest.skip(f"corpus sample {relative} is absent (expected under {CORPUS})")
    return path


def uci_row(
    number: str,
    state: str,
    updated_at: str,
    *,
    mod: int,
    group: str = "Group 1",
    assignee: str = "?",
    reassignments: int = 0,
    reopens: int = 0,
    priority: str = "3 - Moderate",
    close_code: str = "code 5",
    resolved_at: str = "02-03-2016 10:00",
    closed_at: str = "07-03-2016 11:00",
) -> str:
    """One UCI event-log row; the unnamed columns hold plausible constants."""
    active = "FALSE" if state == "Closed" else "TRUE"
    return ",".join(
        [
            number,
            state,
            active,
            str(reassignments),
            str(reopens),
            str(mod),
            "TRUE",
            "Caller 7",
            "Opened by  8",
            "01-03-2016 09:00",
            "Created by 6",
            "01-03-2016 09:05",
            f"Updated by {mod + 100}",
            updated_at,
            "Phone",
            "Location 143",
            "Category 55",
            "Subcategory 170",
            "Symptom 72",
            "?",
            "2 - Medium",
            "2 - Medium",
            priority,
            group,
            assignee,
            "TRUE",
            "FALSE",
            "Do Not Notify",
            "?",
            "?",
            "?",
            "?",
            close_code,
            "Resolved by 149",
            resolved_at,
            closed_at,
        ]
    )


@pytest.fixture
def write_csv(tmp_path: Path) -> Callable[..., Path]:
    def write(*lines: str, name: str = "export.csv") -> Path:
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def model() -> ServiceModel:
    """The built-in ITSM model, loaded once."""
    return itsm_model()


@pytest.fixture(scope="session")
def history() -> IncidentHistory:
    """The shipped synthetic history, named as the bench names it."""
    return import_history(default_data(), names_seed=0)[0]
