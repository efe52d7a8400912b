"""The back-end, extension and dialect registries: each built-in back end is declared once, by
name, and a model file naming its extension is served without anyone importing the back end."""

from __future__ import annotations

from pathlib import Path

import pytest

from myna.backends import BACKENDS, Backend, builtin_model
from myna.errors import MockError, ModelError
from myna.mocks.client import MockClient
from myna.mocks.dialects import DIALECTS
from myna.mocks.extensions import EXTENSIONS, extensions_for
from myna.mocks.runtime import Mock
from myna.schemas.openapi import save

NAMES = ("crm", "erp", "itsm")


def test_the_built_in_back_ends_are_declared_by_name() -> None:
    assert BACKENDS.names() == list(NAMES)
    assert all(isinstance(BACKENDS[name], Backend) for name in NAMES)


def test_an_unknown_back_end_names_the_known_ones() -> None:
    with pytest.raises(
        MockError, match="no built-in back end named 'nonesuch'; there are: crm, erp, itsm"
    ):
        builtin_model("nonesuch")


def test_registering_a_second_back_end_of_the_same_name_is_refused() -> None:
    with pytest.raises(MockError, match="already registered"):
        BACKENDS.register("itsm", Backend("itsm", "again", "myna.backends.itsm", "servicenow"))
    assert BACKENDS["itsm"].title == "ITSM (ServiceNow Table API)"


@pytest.mark.parametrize("name", NAMES)
def test_builtin_model_gives_a_fresh_copy_each_time(name: str) -> None:
    first = builtin_model(name)
    first.resources.clear()
    assert builtin_model(name).resources


@pytest.mark.parametrize("name", NAMES)
def test_each_spec_names_what_its_model_opts_into(name: str) -> None:
    backend = BACKENDS[name]
    model = builtin_model(name)
    assert model.extensions == [backend.extension]
    assert backend.extension in EXTENSIONS
    if backend.dialect is None:
        assert model.conventions.query_language == "fields"
    else:
        assert model.conventions.query_language == backend.dialect
        assert backend.dialect in DIALECTS


@pytest.mark.parametrize("name", NAMES)
def test_a_copy_of_a_shipped_model_is_served_with_its_extension(name: str, tmp_path: Path) -> None:
    copy = tmp_path / f"{name}.yaml"
    save(builtin_model(name), copy)
    from myna.mocks.backend import resolve_model

    model = resolve_model(str(copy))
    assert [extension.name for extension in extensions_for(model).chosen] == model.extensions


def test_a_copy_of_the_erp_model_answers_with_its_rules(tmp_path: Path) -> None:
    copy = tmp_path / "erp.yaml"
    save(builtin_model("erp"), copy)
    from myna.mocks.backend import resolve_model

    client = MockClient(
        Mock(resolve_model(str(copy))), headers={"Authorization": "Bearer myna-token"}
    )
    # An action is the extension's own route: without the extension nothing answers it.
    answer = client.post("/api/erp/v1/purchase-orders/PO-404/approve", json={})
    assert answer.status == 404, answer.body.decode()
    assert "purchase-orders has no record PO-404" in answer.body.decode()


def test_a_model_naming_an_unknown_extension_lists_the_installed_ones() -> None:
    model = builtin_model("erp")
    model.extensions = ["nowhere"]
    with pytest.raises(ModelError, match=r"'nowhere'; there are: erp, salesforce, servicenow"):
        extensions_for(model)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_shipped_world_fits_its_back_ends_model(name: str) -> None:
    """`myna serve NAME` loads its shipped worlds without checking each value (they are the
    back end's own); this is the check, every value against the model, every reference
    resolved."""
    from myna.mocks.seed import read_files

    backend = BACKENDS[name]
    for world, _ in backend.worlds:
        with backend.shipped_world(world) as directory:
            if directory is not None:
                checked = read_files(builtin_model(name), directory)
                unchecked = read_files(builtin_model(name), directory, checked=False)
                assert checked == unchecked
                assert checked.records, world
