"""Turn request bytes into a checked JSON value, or a `Rejection` naming what is wrong.

Everything a client can get wrong in a body ends here as a 4xx: bytes that are not UTF-8 JSON,
bodies over the size limit, nesting deeper than any record needs, strings a database would choke
on (NUL, lone surrogates), values of the wrong type and fields the resource does not have.
Validators are compiled once per operation (`myna.mocks.contract`), so a request costs one
`orjson.loads` and one schema pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jsonschema_rs
import orjson

from myna.errors import MockError, ModelError
from myna.mocks.rejection import Rejection
from myna.schemas.model import JsonSchema

if TYPE_CHECKING:  # imported on the first refusal explained: 0.05 s of a start otherwise
    from jsonschema import Draft202012Validator, ValidationError

MAX_BODY_BYTES = 1 << 20
MAX_DEPTH = 32

REQUIRED_MISSING = "required_missing"
"""The code of a refusal for required fields the request body lacks (`Rejection.fields`)."""


class SchemaCheck:
    """A JSON Schema compiled twice: jsonschema-rs answers "valid?" on the hot path (several
    times faster), and only an invalid instance pays for Python jsonschema's `best_match`, whose
    messages and paths are the ones a client is shown."""

    __slots__ = ("_explainer", "_fast", "formats", "schema")

    def __init__(self, schema: JsonSchema, *, formats: bool = False) -> None:
        self.schema = schema
        self.formats = formats
        try:
            self._fast = jsonschema_rs.Draft202012Validator(schema, validate_formats=formats)
        except jsonschema_rs.ValidationError as invalid:
            # A model edited by hand: an enum written as a mapping, a type that is no type.
            where = ".".join(str(part) for part in invalid.instance_path)
            raise ModelError(
                f"a schema in the model is not valid JSON Schema: {invalid.message}", at=where
            ) from None
        self._explainer: Draft202012Validator | None = None

    def is_valid(self, instance: Any) -> bool:
        return bool(self._fast.is_valid(instance))

    def explain(self, instance: Any) -> ValidationError | str:
        """The most relevant error, or jsonschema-rs's message when only it objects (a format
        the Python checker does not know)."""
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import best_match

        if self._explainer is None:
            checker = Draft202012Validator.FORMAT_CHECKER if self.formats else None
            self._explainer = Draft202012Validator(self.schema, format_checker=checker)
        error = best_match(self._explainer.iter_errors(instance))
        if error is not None:
            return error
        first = next(iter(self._fast.iter_errors(instance)), None)
        return str(getattr(first, "message", "does not match the schema"))


class ResponseContractError(MockError):
    """Strict mode: the mock rendered a response its own model does not allow (a Myna bug)."""

    kind = "response_contract"


def parse_json_body(
    body: bytes,
    *,
    status: int,
    max_bytes: int = MAX_BODY_BYTES,
    content_type: str | None = None,
) -> Any:
    """The body as JSON; 413 when too large, 415 when `content_type` (the request's header, if
    it sent one) names another media type, `status` (400/422) when it is not acceptable JSON."""
    if content_type and not is_json_media_type(content_type):
        raise Rejection(
            415,
            f"Content-Type {content_type[:80]!r} is not supported: send application/json",
            code="unsupported_media_type",
        )
    if len(body) > max_bytes:
        raise Rejection(413, f"request body is {len(body)} bytes; the limit is {max_bytes}")
    if not body.strip():
        raise Rejection(
            status, "request body is empty; a JSON object is expected", code="unreadable_body"
        )
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise Rejection(
            status, f"request body is not valid JSON: {error}", code="unreadable_body"
        ) from None
    # JSON can spell NUL only as the escape \u0000, and k arrays and objects nest at most k
    # deep: a body without either cannot fail the walk, which is then skipped.
    if b"\\u0000" in body or body.count(b"{") + body.count(b"[") >= MAX_DEPTH:
        problem = _first_problem(value)
        if problem is not None:
            raise Rejection(status, problem)
    return value


def check_strings(value: Any, *, status: int) -> None:
    """Refuse what a request sent outside a JSON body (a query's values, a file's name) on the
    terms a JSON body is refused on: no NUL character, no deeper nesting than `MAX_DEPTH`."""
    problem = _first_problem(value)
    if problem is not None:
        raise Rejection(status, problem)


def is_json_media_type(content_type: str) -> bool:
    """application/json and its kin (application/merge-patch+json, text/json; any parameters)."""
    media = content_type.partition(";")[0].strip().lower()
    return media == "*/*" or media.endswith(("/json", "+json"))


def _first_problem(value: Any) -> str | None:
    """Depth and string checks, iteratively so hostile nesting cannot exhaust the stack."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "$")]
    while stack:
        item, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            return f"request body nests deeper than {MAX_DEPTH} levels at {where}"
        if isinstance(item, str):
            if "\x00" in item:
                return f"{where} contains a NUL character"
        elif isinstance(item, dict):
            for key, child in item.items():
                if "\x00" in key:
                    return f"{where} has a key containing a NUL character"
                stack.append((child, depth + 1, f"{where}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, depth + 1, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def require_object(value: Any, *, status: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Rejection(status, f"request body must be a JSON object, not {_json_type(value)}")
    return value


def coerce_scalars(body: dict[str, Any], stringly: frozenset[str]) -> dict[str, Any]:
    """Under values_as_strings the service accepts 2 or true where it stores "2" or "true"
    (and 2.0, which JSON Schema counts as an integer, as "2")."""
    if not stringly:
        return body
    coerced: dict[str, Any] | None = None
    for name, value in body.items():
        if name in stringly and isinstance(value, bool | int | float):
            if coerced is None:
                coerced = dict(body)
            coerced[name] = _as_text(value)
    return body if coerced is None else coerced


def _as_text(value: bool | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def validate_request(check: SchemaCheck, body: Any, *, status: int) -> None:
    if check.is_valid(body):
        return
    error = check.explain(body)
    if isinstance(error, str):
        raise Rejection(status, error)
    fields = _fields_of(error, body)
    where = ".".join(str(part) for part in error.absolute_path)
    prefix = f"field {where}: " if where else ""
    # A missing required field gets its own code, so a service extension can answer it in the
    # service's words (ServiceNow: a data policy 403 naming the fields).
    code = REQUIRED_MISSING if error.validator == "required" and not where else None
    raise Rejection(status, f"{prefix}{_describe(error)}", fields=fields, code=code)


def validate_response(check: SchemaCheck, payload: Any, *, method: str, path: str) -> None:
    if check.is_valid(payload):
        return
    error = check.explain(payload)
    if isinstance(error, str):
        where, message = "(root)", error
    else:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        message = error.message
    raise ResponseContractError(
        f"response body at {where} breaks the model: {message}", method=method, path=path
    )


def _fields_of(error: ValidationError, body: Any) -> tuple[str, ...]:
    if error.absolute_path:
        return (str(error.absolute_path[0]),)
    if error.validator == "additionalProperties" and isinstance(body, dict):
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        return tuple(sorted(key for key in body if key not in allowed))
    if error.validator == "required" and isinstance(error.validator_value, list):
        return tuple(name for name in error.validator_value if name not in body)
    return ()


def _describe(error: ValidationError) -> str:
    if error.validator == "additionalProperties":
        return f"unknown field(s): {error.message.split('(')[-1].rstrip(')')}"
    return _shorten(error.message)


def _shorten(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "null" if value is None else "an object"
