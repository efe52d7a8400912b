"""Creates that take a file as their body: the record is made of what came beside the bytes."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from myna.schemas import learn
from myna.schemas.model import ServiceModel
from myna.schemas.render import operations_table
from myna.traces.model import Body, Exchange, Session
from tests.mocks.crud_session import seeded_client

API = "https://files.example.com/releases/7/assets"


def operations_table_text(model: ServiceModel) -> str:
    """`myna model show`'s operations table, as a user reads it."""
    console = Console(width=300, record=True)
    console.print(operations_table(model))
    return console.export_text()


def asset(asset_id: int, name: str, size: int, label: str = "") -> dict[str, Any]:
    return {
        "id": asset_id,
        "name": name,
        "label": label,
        "size": size,
        "content_type": "text/plain",
    }


def upload(number: int, name: str, text: str, label: str) -> Exchange:
    return Exchange(
        id=f"up{number}",
        method="POST",
        url=f"{API}?name={name}&label={label}",
        status=201,
        query=[("name", name), ("label", label)],
        request_headers=[("Content-Type", "text/plain")],
        request_body=Body("text", text, "text/plain"),
        response_body=Body("json", asset(number, name, len(text.encode()), label)),
    )


def test_an_upload_makes_its_record_of_the_query_the_size_and_the_media_type() -> None:
    traffic = Session(
        id="s",
        events=[
            upload(1, "notes.txt", "Hello, world!\n", "first"),
            upload(2, "readme.md", "# readme\n\nmore text", "second"),
            Exchange(
                id="list",
                method="GET",
                url=API,
                status=200,
                response_body=Body("json", [asset(1, "notes.txt", 14, "first")]),
            ),
        ],
    )
    (model,) = learn([traffic])
    [create] = [op for op in model.operations if op.kind == "create"]
    assert create.upload is not None
    assert create.upload.query_fields == {"name": "name", "label": "label"}
    assert (create.upload.size_field, create.upload.type_field) == ("size", "content_type")
    assert "takes a file" in operations_table_text(model)
    client = seeded_client(model)

    made = client.post(
        "/releases/7/assets",
        params={"name": "data.csv", "label": "numbers"},
        content=b"a,b\n1,2\n",
        headers={"Content-Type": "text/csv; charset=utf-8"},
    )

    assert made.status == 201, made.json()
    record = made.json()
    assert (record["name"], record["label"], record["size"]) == ("data.csv", "numbers", 8)
    assert record["content_type"] == "text/csv"
    assert client.get(f"/releases/7/assets/{record['id']}").json()["name"] == "data.csv"


def test_an_upload_whose_query_holds_a_nul_is_refused_as_a_body_would_be() -> None:
    traffic = Session(
        id="s", events=[upload(1, "notes.txt", "Hello\n", "a"), upload(2, "b.md", "#", "b")]
    )
    (model,) = learn([traffic])
    client = seeded_client(model)

    refused = client.post(
        "/releases/7/assets",
        params={"name": "a\x00.csv", "label": "x"},
        content=b"a,b\n",
        headers={"Content-Type": "text/csv"},
    )

    assert refused.status == 400, refused.body
    assert "NUL" in refused.body.decode()
    assert b"\\u0000" not in client.get("/releases/7/assets").body
