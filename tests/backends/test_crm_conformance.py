"""The CRM back end replays its own corpus: started from the org the corpus found (its users,
profiles, roles, groups, permission sets and lead import, as seed files) and signed in as the
org's administrator, the mock answers the recorded calls as the reference org did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myna.backends import BACKENDS, builtin_model
from myna.backends.crm.corpus import ADMINISTRATOR, PEOPLE, initial_records
from myna.backends.crm.instance import ADMIN
from myna.mocks.conformance import run_conformance
from myna.traces.model import Session
from tests.backends.seeds import initial_seed_dir


@pytest.fixture(scope="module")
def corpus_sessions() -> list[Session]:
    return BACKENDS["crm"].corpus_sessions()


@pytest.fixture(scope="module")
def initial_seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference org before the corpus ran, as seed files."""
    return initial_seed_dir(tmp_path_factory, initial_records)


def _rows(directory: Path, name: str) -> list[dict[str, object]]:
    lines = (directory / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_the_initial_seed_is_the_org_before_its_first_call(initial_seed: Path) -> None:
    written = {path.stem for path in initial_seed.iterdir()}
    assert written == {
        "User",
        "Profile",
        "UserRole",
        "Group",
        "GroupMember",
        "PermissionSet",
        "PermissionSetAssignment",
        "Lead",
    }
    usernames = [row["Username"] for row in _rows(initial_seed, "User")]
    assert usernames == [ADMIN[0], *(person[0] for person in PEOPLE)]
    assert ADMINISTRATOR in usernames
    # The trade-show list came in through the import wizard, before any recorded call.
    leads = _rows(initial_seed, "Lead")
    assert len(leads) == 230
    assert {lead["LeadSource"] for lead in leads} == {"Purchased List"}


def _chapter(sessions: list[Session], slug: str) -> list[Session]:
    return [session for session in sessions if session.id.endswith(slug)]


def test_the_profiles_and_roles_a_new_user_needs_come_from_the_initial_seed(
    corpus_sessions: list[Session], initial_seed: Path
) -> None:
    # The administrator adds a user with a profile and a role no recorded answer ever showed:
    # without the org's initial state the mock refuses the create, and every later call on
    # that user finds nothing.
    (chapter,) = _chapter(corpus_sessions, "-administer-every-object")
    users = [e for e in chapter.exchanges if "/sobjects/User" in e.path]
    replayed = [Session(id="new-user", events=list(users))]
    bare = run_conformance(builtin_model("crm"), replayed)
    seeded = run_conformance(
        builtin_model("crm"), replayed, seed_dir=initial_seed, user=ADMINISTRATOR
    )
    create, *later = bare.mismatches
    assert (create.method, create.recorded_status, create.status) == ("POST", 201, 400)
    assert "INVALID_CROSS_REFERENCE_KEY" in create.reason
    assert {m.status for m in later} == {404}
    assert (seeded.matched, seeded.total) == (len(users), len(users))


def test_a_caller_the_org_never_had_acts_as_its_administrator(
    corpus_sessions: list[Session], initial_seed: Path
) -> None:
    # The access review lists every user. Signed in as the org's administrator, or as a caller
    # the org never had (who acts as its administrator and is written nowhere), the list is the
    # org's, as recorded: no user appears because someone called.
    chapter = _chapter(corpus_sessions, "-review-access")
    model = builtin_model("crm")
    for user in (ADMINISTRATOR, "stranger"):
        replayed = run_conformance(model, chapter, seed_dir=initial_seed, user=user)
        assert replayed.mismatches == [], user
        assert replayed.matched == replayed.total > 0
