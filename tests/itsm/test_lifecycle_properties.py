"""Properties of `rebuild` over arbitrary sequences of snapshots."""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from myna.itsm.importers.lifecycle import Snapshot, rebuild
from myna.itsm.importers.values import HoldReason, IncidentState

Spec = list[tuple[IncidentState, HoldReason | None, str | None, str | None]]
DONE = {IncidentState.RESOLVED, IncidentState.CLOSED}
steps = st.lists(
    st.tuples(
        st.sampled_from(list(IncidentState)),
        st.none() | st.sampled_from(list(HoldReason)),
        st.sampled_from([None, "g1", "g2", "g3"]),
        st.sampled_from([None, "u1", "u2"]),
    ),
    min_size=1,
    max_size=25,
)


def _snapshots(spec: Spec) -> list[Snapshot]:
    start = datetime(2026, 1, 1)
    return [
        Snapshot(
            line=position + 2,
            at=start + timedelta(hours=position),
            state=state,
            hold_reason=reason,
            source_state=state.label,
            group=group,
            assignee=user,
            by="updater",
            mod_count=position,
            fields={"state": str(int(state)), "assignment_group": group or ""},
        )
        for position, (state, reason, group, user) in enumerate(spec)
    ]


@given(steps)
def test_state_changes_are_the_points_where_state_or_hold_reason_differ(spec: Spec) -> None:
    snapshots = _snapshots(spec)
    lifecycle = rebuild(snapshots)
    changes = lifecycle.state_changes
    assert changes[0].previous is None
    assert changes[0].line == snapshots[0].line
    expected = 1 + sum(
        1 for a, b in pairwise(snapshots) if (a.state, a.hold_reason) != (b.state, b.hold_reason)
    )
    assert len(changes) == expected
    for before, after in pairwise(changes):
        assert after.previous == before.state
        assert before.at <= after.at


@given(steps)
def test_reopenings_are_exactly_the_returns_from_resolved_or_closed_to_open(spec: Spec) -> None:
    lifecycle = rebuild(_snapshots(spec))
    states = [state for state, *_ in spec]
    returns = [
        (a, b)
        for a, b in pairwise(states)
        if a in DONE and b not in DONE and b is not IncidentState.CANCELED
    ]
    assert [(r.from_state, r.to_state) for r in lifecycle.reopenings] == returns


@given(steps)
def test_reassignments_chain_and_audit_matches_field_differences(spec: Spec) -> None:
    snapshots = _snapshots(spec)
    lifecycle = rebuild(snapshots)
    for before, after in pairwise(lifecycle.reassignments):
        assert (before.to_group, before.to_user) == (after.from_group, after.from_user)
    if lifecycle.reassignments:
        last = lifecycle.reassignments[-1]
        assert (last.to_group, last.to_user) == (snapshots[-1].group, snapshots[-1].assignee)
    expected_audit = sum(
        (a.fields["state"] != b.fields["state"])
        + (a.fields["assignment_group"] != b.fields["assignment_group"])
        for a, b in pairwise(snapshots)
    )
    assert len(lifecycle.field_changes) == expected_audit
