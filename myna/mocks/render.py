"""Render stored records, lists and errors in the service's own shapes.

Stored records hold plain values (reference fields hold the target's id); the wire form adds what
the service showed: numbers and booleans as strings and empty values as "" (values_as_strings),
references as `{link, value}`, Salesforce `attributes`, the envelope around items and lists, and
errors filled into the service's error template.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from myna.mocks.contract import ResourceContract
from myna.mocks.rejection import Rejection
from myna.schemas.model import Envelope, ServiceModel


@dataclass(frozen=True, slots=True)
class RecordRenderer:
    """Renders one resource's records; built once per resource."""

    contract: ResourceContract
    as_strings: bool
    field_names: tuple[str, ...]
    links: Mapping[str, tuple[str, str]]  # field -> (item path before id, after id)
    attributes_type: str | None
    item_path: tuple[str, str] | None
    # Every answer renders a whole record, so each field's link and whether the model declares it
    # are looked up once here, and the names a record may hold beyond them are known up front.
    plan: tuple[tuple[str, tuple[str, str] | None, bool], ...] = field(init=False)
    known: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        declared = self.contract.resource.fields
        plan = tuple((name, self.links.get(name), name in declared) for name in self.field_names)
        known = {*self.field_names, *declared}
        if self.attributes_type is not None:
            known.add("attributes")
        object.__setattr__(self, "plan", plan)
        object.__setattr__(self, "known", frozenset(known))

    def render(
        self, record: Mapping[str, Any], base_url: str, fields: tuple[str, ...] | None = None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.attributes_type is not None:
            record_id = record.get(self.contract.resource.id_field)
            url = f"{self.item_path[0]}{record_id}{self.item_path[1]}" if self.item_path else ""
            out["attributes"] = {"type": self.attributes_type, "url": url}
        if fields is not None:
            return self._render_fields(record, base_url, fields, out)
        as_strings = self.as_strings
        for name, link, declared in self.plan:
            value = record.get(name, _MISSING)
            if value is _MISSING:
                if not (as_strings and declared):
                    continue
                value = None
            if link is not None and value is not None and value != "":
                out[name] = {"link": f"{base_url}{link[0]}{value}{link[1]}", "value": str(value)}
            elif as_strings and type(value) is not str:
                out[name] = to_string(value)
            else:
                out[name] = value
        if not self.known.issuperset(record):
            # Values the model does not declare (an extension's): after the declared ones.
            for name, value in record.items():
                if name not in self.known:
                    out[name] = to_string(value) if as_strings else value
        return out

    def _render_fields(
        self,
        record: Mapping[str, Any],
        base_url: str,
        fields: tuple[str, ...],
        out: dict[str, Any],
    ) -> dict[str, Any]:
        """Only the fields a client asked for (`sysparm_fields`), in its order."""
        as_strings = self.as_strings
        links = self.links
        for name in fields:
            if name in record:
                value = record[name]
            elif as_strings:
                value = None
            else:
                continue
            link = links.get(name)
            if link is not None and value is not None and value != "":
                out[name] = {"link": f"{base_url}{link[0]}{value}{link[1]}", "value": str(value)}
            elif as_strings:
                out[name] = to_string(value)
            else:
                out[name] = value
        return out


_MISSING: Any = object()


def to_string(value: Any) -> Any:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return str(value)
    return value


def renderer_for(contract: ResourceContract, model: ServiceModel) -> RecordRenderer:
    conventions = model.conventions
    resource = contract.resource
    links: dict[str, tuple[str, str]] = {}
    for name, reference in contract.references.items():
        if reference.style != "link_value":
            continue
        target = model.resources.get(reference.resource)
        if target is not None and target.item_path:
            links[name] = _split_template(target.item_path)
        else:
            # ServiceNow links every reference, served table or not (`sys_user.company` ->
            # core_company): the link follows the URL scheme of the tables the model serves.
            path = unserved_item_path(reference.resource, model)
            if path is not None:
                links[name] = path
    names = [resource.id_field] if resource.id_field not in resource.fields else []
    names.extend(resource.fields)
    return RecordRenderer(
        contract=contract,
        as_strings=conventions.values_as_strings,
        field_names=tuple(names),
        links=links,
        attributes_type=resource.name if contract.envelope.record_attributes else None,
        item_path=_split_template(resource.item_path) if resource.item_path else None,
    )


def unserved_item_path(table: str, model: ServiceModel) -> tuple[str, str] | None:
    """The item path a table the model does not serve would have, by the scheme most of its
    served tables share: `/api/now/table/incident/{sys_id}` gives `/api/now/table/core_company/`
    (a few tables are also served under another prefix, `/api/now/v1/...`, and do not decide)."""
    schemes: Counter[tuple[str, str]] = Counter()
    for name, resource in model.resources.items():
        if not resource.item_path:
            continue
        before, after = _split_template(resource.item_path)
        head, _, last = before.rstrip("/").rpartition("/")
        if last == name:
            schemes[(head, after)] += 1
    if not schemes:
        return None
    (head, after), _ = max(schemes.items(), key=lambda item: (item[1], item[0]))
    return f"{head}/{table}/", after


def _split_template(path: str) -> tuple[str, str]:
    """`/table/sys_user/{sys_id}` -> ("/table/sys_user/", ""): the text around the id slot."""
    start = path.rfind("{")
    end = path.find("}", start)
    if start < 0 or end < 0:
        return path.rstrip("/") + "/", ""
    return path[:start], path[end + 1 :]


def wrap_item(record: dict[str, Any], envelope: Envelope) -> Any:
    if envelope.style == "wrapped" and envelope.item_key:
        return {envelope.item_key: record}
    return record


MORE_KEYS = frozenset({"has_more", "hasMore", "more"})
"""Done keys that say the opposite: whether another page follows."""


def wrap_list(
    records: list[dict[str, Any]],
    envelope: Envelope,
    *,
    total: int,
    next_url: str | None,
) -> Any:
    if envelope.style != "wrapped" or not envelope.list_key:
        return records
    # The other keys the service's lists carry, a next key it shows as null on a last page too.
    body: dict[str, Any] = dict(envelope.extra)
    if envelope.total_key:
        body[envelope.total_key] = total
    if envelope.done_key:
        done = next_url is None
        body[envelope.done_key] = not done if envelope.done_key in MORE_KEYS else done
    if envelope.next_key and next_url is not None:
        body[envelope.next_key] = next_url
    body[envelope.list_key] = records
    return body


def error_body(model: ServiceModel, rejection: Rejection) -> tuple[Any, list[tuple[str, str]]]:
    """The error in the service's template, and the template's headers."""
    shape = model.error_shape(rejection.status)
    headers = list(rejection.headers)
    if shape is None:
        body: Any = {"error": {"message": rejection.message, "detail": rejection.detail}}
        if rejection.fields:
            body["error"]["fields"] = list(rejection.fields)
        return body, headers
    headers.extend(shape.headers.items())
    values = {
        "{message}": rejection.message,
        "{detail}": rejection.detail,
        "{code}": rejection.code,
        "{field}": rejection.fields[0] if rejection.fields else "",
        "{status}": str(rejection.status),
    }
    return _fill(shape.template, values, list(rejection.fields)), headers


def _fill(template: Any, values: Mapping[str, str], fields: list[str]) -> Any:
    if isinstance(template, str):
        if template == "{fields}":
            return fields
        if "{" not in template:
            return template
        for placeholder, value in values.items():
            template = template.replace(placeholder, value)
        return template
    if isinstance(template, dict):
        return {key: _fill(value, values, fields) for key, value in template.items()}
    if isinstance(template, list):
        return [_fill(item, values, fields) for item in template]
    return template
