"""What a mock publishes of its answers admits every answer it gives: a learned schema gives way
where what clients store, what the mock fills in and the records it starts with contradict it,
and only there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient, answered
from myna.mocks.answered import admitting, union
from myna.schemas import learn
from myna.schemas.shape import schema_of
from tests.mocks.crud_session import recorded_mock
from tests.schemas.traffic import exchange, servicenow_lifecycle, session

NOTES = "https://notes.example.com/api/notes"

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.sampled_from(["2024-05-19T14:21:00.000Z", "2018-06-07", "https://a.example/x", ""]),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["id", "href", "name", "type"]), inner, max_size=3)
    ),
    max_leaves=8,
)


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(jsonschema_rs.Draft202012Validator(schema, validate_formats=True).is_valid(value))


@settings(max_examples=150, deadline=None)
@given(st.lists(_json, min_size=1, max_size=4), st.lists(_json, max_size=4))
def test_a_widened_schema_admits_what_it_admitted_and_every_new_value(
    seen: list[Any], answered: list[Any]
) -> None:
    learned = schema_of(seen)
    admitted = [value for value in seen if _valid(learned, value)]

    widened = admitting(learned, answered)

    assert all(_valid(widened, value) for value in [*admitted, *answered])


@settings(max_examples=100, deadline=None)
@given(st.lists(_json, min_size=1, max_size=4))
def test_a_schema_that_admits_every_value_is_kept_as_it_is(seen: list[Any]) -> None:
    learned = schema_of(seen)
    admitted = [value for value in seen if _valid(learned, value)]

    assert admitting(learned, admitted) == learned


def test_only_the_part_a_value_contradicts_gives_way() -> None:
    link = {
        "type": "object",
        "properties": {
            "href": {"type": "string", "format": "uri"},
            "name": {"type": "string"},
            "hints": {"type": "null"},
        },
        "required": ["href", "name"],
    }

    widened = admitting(link, [{"href": "", "name": "self", "hints": ""}, {"name": "next"}])

    assert _valid(widened, {"href": "", "name": "self", "hints": "x"})
    assert not _valid(widened, {"href": "", "name": 5})
    assert not _valid(widened, {"href": 5, "name": "self"})
    assert widened["required"] == ["name"]


def test_a_union_extends_a_bare_any_of_and_keeps_its_notes() -> None:
    learned = {"anyOf": [{"type": "string"}, {"type": "null"}], "x-myna-types": {"string": 3}}

    assert union(learned, {"type": "integer"}) == {
        "anyOf": [{"type": "string"}, {"type": "null"}, {"type": "integer"}],
        "x-myna-types": {"string": 3},
    }
    assert union(learned, {"type": "null"}) == learned
    assert union({"type": "string", "maxLength": 0}, {}) == {}


def _notes_model() -> Any:
    notes = [
        {
            "id": index,
            "title": f"Note {index}",
            "memo": "",
            "link": {"href": f"https://notes.example.com/n/{index}", "hint": None},
        }
        for index in range(1, 7)
    ]
    traffic = session(
        exchange("GET", NOTES, response={"notes": notes}),
        exchange("GET", f"{NOTES}/1", response={"note": notes[0]}),
        *(
            exchange(
                "POST",
                NOTES,
                201,
                {"note": note},
                request={
                    "note": {
                        "title": note["title"],
                        "memo": "",
                        "link": {"href": note["link"]["href"]},
                    }
                },
            )
            for note in notes[4:]
        ),
        exchange("PATCH", f"{NOTES}/1", response={"note": notes[0]}, request={"note": {}}),
    )
    (model,) = learn([traffic])
    return model


def _create_schema(mock: Mock) -> dict[str, Any]:
    document = json.loads(mock.openapi_bytes())
    created = document["paths"]["/api/notes"]["post"]["responses"]["201"]
    schema: dict[str, Any] = created["content"]["application/json"]["schema"]
    return {**schema, "components": document.get("components", {})}


def test_what_a_client_stores_is_what_the_document_says_the_mock_answers() -> None:
    """`memo` was only ever read empty (`maxLength: 0`), `link.href` always a URI: a client may
    still store text in one and anything in the other, and the mock answers with it."""
    mock = Mock(_notes_model(), strict=True)  # strict: a contradicting answer raises
    client = MockClient(mock)

    made = client.post(
        "/api/notes",
        json={"note": {"title": "Mine", "memo": "remember", "link": {"href": "not a uri"}}},
    )

    assert made.status == 201, made.json()
    assert made.json()["note"]["memo"] == "remember"
    assert _valid(_create_schema(mock), made.json())
    assert not _valid(_create_schema(mock), {"note": {"title": 5}})


def test_nested_keys_filled_in_as_null_are_answered_as_null() -> None:
    client = MockClient(Mock(_notes_model(), strict=True))

    made = client.post("/api/notes", json={"note": {"title": "Mine", "link": {"href": "x"}}})

    assert made.status == 201, made.json()
    assert made.json()["note"]["link"] == {"href": "x", "hint": None}


def test_a_replayed_answer_echoing_any_path_value_matches_the_document() -> None:
    """A replayed answer carries the requested path value where the recording had its own (a
    UUID): the document admits any text there, however precise the learned schema is."""
    users = [
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        "16fd2706-8baf-433b-82eb-8c7fada847da",
    ]
    bodies = [{"enrollment": {"user": user, "state": "done"}} for user in users]
    traffic = session(
        *(
            exchange("GET", f"https://idp.example.com/api/users/{user}/enrollment", response=body)
            for user, body in zip(users, bodies, strict=True)
        )
    )
    (model,) = learn([traffic])
    [operation] = model.operations
    assert operation.recorded, "the operation is replayed"
    # As precise as the learner can be about these answers: `user` is a UUID.
    operation.responses[0].schema_ = schema_of(bodies)
    mock = Mock(model)
    document = json.loads(mock.openapi_bytes())
    ok = document["paths"][operation.path]["get"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]

    answer = MockClient(mock).get("/api/users/someone else/enrollment")

    assert answer.json() == {"enrollment": {"user": "someone else", "state": "done"}}
    assert _valid(schema, answer.json())
    assert not _valid(schema, {"enrollment": {"user": 7}})


def test_a_counter_climbs_past_the_counts_its_recordings_showed() -> None:
    """Found by schemathesis on ServiceNow's recordings: `sys_mod_count` was learned as the
    closed set of counts seen ("0", "1", "2"), and the third write past them broke the schema
    (a 500 in strict mode)."""
    (model,) = learn(servicenow_lifecycle())
    counter = model.resources["incident"].fields["sys_mod_count"]
    counter.schema_ = {**counter.schema_, "enum": ["0", "1", "2"]}  # as many more writes learn
    client = MockClient(recorded_mock(model, strict=True), auth=("myna", "myna"))
    [first] = client.get("/api/now/table/incident", params={"sysparm_limit": 1}).json()["result"]
    item = f"/api/now/table/incident/{first['sys_id']}"

    answers = [client.patch(item, json={"short_description": f"n{n}"}) for n in range(4)]

    assert [answer.status for answer in answers] == [200] * 4, answers[-1].json()
    assert int(answers[-1].json()["result"]["sys_mod_count"]) == int(first["sys_mod_count"]) + 4


@pytest.mark.parametrize("backend", ["itsm", "crm"])
def test_the_kept_sample_records_are_the_ones_generation_makes(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large model's sample records come from the cache from the second build on
    (`answered._seeded`): they equal the generated ones, and reading them imports no Faker."""
    monkeypatch.setenv("MYNA_CACHE_DIR", str(tmp_path))
    model = builtin_model(backend)
    made = answered._made_seeded(model)
    assert answered._seeded(model) == made
    assert len(list((tmp_path / "seeded").glob("*.json"))) == 1
    code = (
        "import sys; from myna.backends import builtin_model; from myna.mocks import answered; "
        f"seeded = answered._seeded(builtin_model({backend!r})); "
        "print('faker' in sys.modules, len(seeded))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MYNA_CACHE_DIR": str(tmp_path)},
    )
    assert shown.stdout.split() == ["False", str(len(made))]
