"""The OpenAPI 3.1 document the running mock serves at `/openapi.json`.

The model's own document (`myna.schemas.openapi.to_openapi`: info, servers, components and the
`x-myna-*` facts) with its `paths` rebuilt from the runtime's compiled contracts, so the request
schemas, parameters and response shapes it publishes are exactly the ones the mock enforces and
renders (values as strings, `{link, value}` references, envelopes, the error template).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from myna.mocks.contract import OperationContract
from myna.schemas.model import JsonSchema
from myna.schemas.openapi import to_openapi

if TYPE_CHECKING:
    from myna.mocks.runtime import Mock

_PATH_PARAM = re.compile(r"\{([^}]+)\}")


def openapi_document(mock: Mock) -> dict[str, Any]:
    document = to_openapi(mock.model)
    paths: dict[str, dict[str, Any]] = {}
    # A path whose every operation the service only refused is not part of what it offers:
    # the mock answers it as recorded, and the document promises no request there. A path
    # with one operation that can succeed lists them all, so its `Allow` and 405s agree.
    offered = {c.operation.path for c in mock.operations if not c.refused_only}
    for contract in mock.operations:
        if contract.operation.path not in offered:
            continue
        operation = contract.operation
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(mock, contract)
    document["paths"] = paths
    security = _security_scheme(mock)
    if security is not None:
        document.setdefault("components", {}).setdefault("securitySchemes", {})["service"] = (
            security
        )
        document["security"] = [{"service": []}]
    return document


def _operation(mock: Mock, contract: OperationContract) -> dict[str, Any]:
    operation = contract.operation
    out: dict[str, Any] = {"operationId": operation.id}
    if operation.summary:
        out["summary"] = operation.summary
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
        for name in _PATH_PARAM.findall(operation.path)
    ]
    if operation.kind == "list" and contract.resource is not None:
        parameters.extend(_list_parameters(mock, contract))
    if parameters:
        out["parameters"] = parameters
    if contract.request_schema is not None and operation.kind not in ("list", "get", "delete"):
        out["requestBody"] = {
            "required": contract.body_required,
            "content": {"application/json": {"schema": _published(contract.request_schema)}},
        }
    out["responses"] = _responses(mock, contract)
    if operation.kind == "auth" or operation.path == mock.model.conventions.auth.token_path:
        out["security"] = []
    return out


def _list_parameters(mock: Mock, contract: OperationContract) -> list[dict[str, Any]]:
    pagination = mock.model.conventions.pagination
    parameters: list[dict[str, Any]] = []
    counting: JsonSchema = {"type": "integer", "minimum": 0}
    for name in (pagination.limit_param, pagination.offset_param, pagination.page_param):
        if name:
            parameters.append({"name": name, "in": "query", "schema": counting})
    if pagination.cursor_param:
        from myna.mocks.runtime import CURSOR_PATTERN

        cursor: JsonSchema = {"type": "string", "pattern": CURSOR_PATTERN}
        parameters.append({"name": pagination.cursor_param, "in": "query", "schema": cursor})
    dialect = mock.dialect
    if dialect is not None and dialect.filter_parameter is not None:
        parameters.append(
            {
                "name": dialect.filter_parameter,
                "in": "query",
                "description": f"{dialect.title} query",
                "schema": {"type": "string"},
            }
        )
    assert contract.resource is not None
    taken = {parameter["name"] for parameter in parameters}
    for name in contract.resource.resource.fields:
        # A dot-walked name (user.user_name) is a path through a reference, which OpenAPI
        # tools read as one too (schemathesis's links): the filter still takes it.
        if name not in taken and "." not in name:
            parameters.append(
                {
                    "name": name,
                    "in": "query",
                    "description": f"{name} equals",
                    "schema": {"type": "string"},
                }
            )
    return parameters


def _responses(mock: Mock, contract: OperationContract) -> dict[str, Any]:
    success: dict[str, Any] = {"description": "success"}
    if contract.response_schema is not None:
        success["content"] = {"application/json": {"schema": _published(contract.response_schema)}}
    pagination = mock.model.conventions.pagination
    if contract.operation.kind == "list":
        headers: dict[str, Any] = {}
        if pagination.total_header:
            headers[pagination.total_header] = {"schema": {"type": "string"}}
        if pagination.link_header:
            headers["Link"] = {"schema": {"type": "string"}}
        if headers:
            success["headers"] = headers
    responses: dict[str, Any] = {str(contract.success_status): success}
    if contract.replayed:
        # Another answer the recordings showed, replayed as it was: documented, its body not.
        for answer in contract.operation.recorded:
            if answer.status < 400:
                responses.setdefault(str(answer.status), {"description": "a recorded answer"})
    for status in _error_statuses(mock, contract):
        meaning = _MALFORMED if status == contract.error_status else "the service's error"
        responses[str(status)] = {
            "description": _MEANINGS.get(status, meaning),
            "content": {"application/json": {"schema": {}}},
        }
    return responses


_MALFORMED = (
    "the request does not fit what this document publishes, or a string in its body (a value "
    "or a key) holds a NUL character, which no store keeps: refused alike on every store"
)


_MEANINGS = {
    401: "no credential that reaches this world",
    404: "the record or world the path names does not exist",
    409: "the write conflicts with the world: a value another record holds uniquely, or a "
    "reference to a record that does not exist",
    503: "the store is full",
}
"""What the runtime's own refusals mean, in the service's error shape."""


def _error_statuses(mock: Mock, contract: OperationContract) -> list[int]:
    """Every error the operation can answer: the runtime's own (credentials, missing records,
    methods, malformed requests, a full store), what the recordings showed it answer, and for
    a write, every refusal status the service's errors took (its rules: an ACL's 403, a
    conflict's 409, a 422; a delete's too); for any body, its size and media type."""
    operation = contract.operation
    statuses = {401, 404, 405, 503, contract.error_status}
    statuses |= {response.status for response in operation.responses if response.status >= 400}
    if contract.replayed:
        statuses |= {answer.status for answer in operation.recorded if answer.status >= 400}
    if operation.kind == "delete":
        statuses |= {shape.status for shape in mock.model.conventions.errors if shape.status}
    if contract.request_validator is not None:
        statuses |= {413, 415}  # a body too large or of another media type
    if operation.kind in ("create", "update", "replace", "action"):
        statuses |= {409, 413, 415}
        statuses |= {shape.status for shape in mock.model.conventions.errors if shape.status}
        statuses = {status for status in statuses if status >= 400}
    return sorted(statuses)


def _security_scheme(mock: Mock) -> dict[str, Any] | None:
    auth = mock.model.conventions.auth
    if auth.scheme == "basic":
        return {"type": "http", "scheme": "basic"}
    if auth.scheme in ("bearer", "oauth2"):
        return {"type": "http", "scheme": "bearer"}
    if auth.scheme == "apikey":
        return {"type": "apiKey", "in": "header", "name": auth.header or "X-API-Key"}
    if auth.scheme == "unknown":
        # A credential in a header, in a form the traces did not show (redacted with it).
        return {"type": "apiKey", "in": "header", "name": auth.header or "Authorization"}
    return None


def _published(schema: JsonSchema) -> JsonSchema:
    """Drop the copy of `components` a contract embeds to resolve `$ref`s on its own: in the
    document they resolve against the document's own components."""
    return {key: value for key, value in schema.items() if key != "components"}
