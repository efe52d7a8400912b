from __future__ import annotations

from collections import Counter

from myna.itsm import synthetic
from myna.itsm.importers import IncidentState, import_history, to_servicenow_records


def test_regenerating_the_shipped_export_reproduces_it_byte_for_byte() -> None:
    shipped = synthetic.default_export().read_bytes()
    assert synthetic.render().encode("utf-8") == shipped


def test_the_export_labels_itself_synthetic_and_the_import_says_so() -> None:
    text = synthetic.default_export().read_text(encoding="utf-8")
    assert text.startswith("# synthetic: true\n")
    history, _ = import_history(synthetic.default_export())
    assert history.synthetic
    assert history.metadata["seed"] == str(synthetic.DEFAULT_SEED)


def test_another_seed_gives_another_export_of_the_asked_size(tmp_path: object) -> None:
    small = synthetic.render(seed=1, incidents=30)
    assert small != synthetic.render(seed=2, incidents=30)
    assert small == synthetic.render(seed=1, incidents=30)
    numbers = {line.split(",")[0] for line in small.splitlines() if line.startswith("INC")}
    assert len(numbers) == 30


def test_the_shipped_export_has_a_plausible_mix_of_lifecycles() -> None:
    history, report = import_history(synthetic.default_export())
    incidents = history.incidents
    assert len(incidents) == synthetic.DEFAULT_INCIDENTS
    # The generator speaks ServiceNow's vocabulary, so the import maps everything cleanly.
    assert report.issues == []

    def share(count: int) -> float:
        return count / len(incidents)

    assert 0.03 < share(sum(1 for i in incidents if i.reopenings)) < 0.2
    assert (
        0.1 < share(sum(1 for i in incidents if any(c.hold_reason for c in i.state_changes))) < 0.5
    )
    assert 0.1 < share(sum(1 for i in incidents if len(i.groups_over_time) > 2)) < 0.6
    assert 0.05 < share(sum(1 for i in incidents if i.made_sla is False)) < 0.4
    assert any(i.active for i in incidents)
    assert {IncidentState.CLOSED, IncidentState.RESOLVED} <= {i.state for i in incidents}
    duplicates = [i for i in incidents if i.resolution and i.resolution.code == "Duplicate"]
    assert len(duplicates) > 10
    by_ci_symptom = Counter((i.cmdb_ci, i.symptom) for i in incidents if i.cmdb_ci)
    assert sum(1 for count in by_ci_symptom.values() if count > 1) > 5


def test_assignees_are_members_of_their_groups_in_the_records() -> None:
    history, _ = import_history(synthetic.default_export())
    records = to_servicenow_records(history)
    members = {(m["group"], m["user"]) for m in records["sys_user_grmember"]}
    for incident in records["incident"]:
        if incident["assigned_to"]:
            assert (incident["assignment_group"], incident["assigned_to"]) in members
