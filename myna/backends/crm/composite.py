"""The composite resources over the org: `composite` (subrequests with `@{ref.path}`
references, `allOrNone`), `composite/batch` (independent subrequests, `haltOnError`),
`composite/tree/{object}` (a record tree, all or nothing) and `composite/sobjects` (sObject
collections: create, update, delete and retrieve up to 200 records).

Every subrequest is answered by the org's own dispatch (`Org.data_call`), so it obeys every rule
the same call sent alone does; what is all-or-nothing runs under an org savepoint, taken back
when a part fails. Written once, for the reference org and the served one alike.
"""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from myna.backends.crm.bulk import apply
from myna.backends.crm.instance import (
    JSON_TYPE,
    Org,
    Refused,
    Reply,
    Request,
    child_of,
    json_object,
    json_reply,
    not_found,
)
from myna.backends.crm.jobs import Outcome
from myna.backends.crm.objects import BY_PREFIX, SObject, sobject
from myna.traces.model import Body

MAX_SUBREQUESTS: Final = 25
MAX_COLLECTION: Final = 200
_REFERENCE: Final = re.compile(r"@\{([A-Za-z0-9_]+)\.([^}]+)\}")
_STEP: Final = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_SUB_PATH: Final = re.compile(r"^(?:/services/data/)?/?(v\d+\.\d)(?:/(.*?))?/?$")
ROLLED_BACK: Final = {
    "errorCode": "PROCESSING_HALTED",
    "message": "The transaction was rolled back since another operation in the same transaction "
    "failed.",
}
HALTED: Final = {
    "errorCode": "BATCH_PROCESSING_HALTED",
    "message": "Batch processing halted per request",
}


def _bad(message: str, code: str = "INVALID_FIELD") -> Refused:
    return Refused(400, code, message, [])


def composite_call(org: Org, request: Request, version: str, parts: list[str], user: str) -> Reply:
    """`composite`, `composite/batch`, `composite/tree/{object}`, `composite/sobjects[/...]`."""
    what = parts[1] if len(parts) > 1 else ""
    if what == "" and request.method == "POST":
        return _json(200, _composite(org, request, user))
    if what == "batch" and request.method == "POST":
        return _json(200, _batch(org, request, user))
    if what == "tree" and len(parts) == 3 and request.method == "POST":
        return _tree(org, request, version, parts[2], user)
    if what == "sobjects":
        return _collection(org, request, version, parts[2:], user)
    raise not_found()


def _sub(org: Org, method: str, url: str, body: Any, user: str) -> tuple[int, Any]:
    """One subrequest, answered as the same call alone: its status and body."""
    split = urlsplit(url)
    matched = _SUB_PATH.match(split.path)
    if matched is None:
        refusal = not_found()
        return refusal.status, refusal.body()
    inner = Request(
        method.upper(),
        split.path,
        parse_qsl(split.query),
        Body() if body is None else Body("json", body, JSON_TYPE),
    )
    rest = matched.group(2) or ""
    try:
        reply = org.data_call(inner, matched.group(1), [unquote(p) for p in rest.split("/")], user)
    except Refused as refusal:
        return refusal.status, refusal.body()
    return reply.status, reply.body.value if reply.body.kind == "json" else None


# -- composite --------------------------------------------------------------------------------


def _composite(org: Org, request: Request, user: str) -> dict[str, Any]:
    spec = json_object(request.body)
    subrequests = spec.get("compositeRequest")
    if not isinstance(subrequests, list) or not 0 < len(subrequests) <= MAX_SUBREQUESTS:
        raise _bad(
            f"compositeRequest must hold 1 to {MAX_SUBREQUESTS} subrequests", "INVALID_REQUEST"
        )
    # Every subrequest is checked before the first runs: a bad one refuses the whole request
    # before anything is written.
    if not all(isinstance(s, dict) and s.get("referenceId") and s.get("url") for s in subrequests):
        raise _bad("Each subrequest needs a method, a url and a referenceId", "INVALID_REQUEST")
    all_or_none = spec.get("allOrNone") is True
    restore = org.savepoint()
    answers: dict[str, tuple[int, Any]] = {}
    results: list[dict[str, Any]] = []
    for sub in subrequests:
        reference = str(sub["referenceId"])
        try:
            url = _resolve(str(sub["url"]), answers)
            body = _resolve(sub.get("body"), answers)
            status, value = _sub(org, str(sub.get("method") or "GET"), url, body, user)
        except LookupError as missing:
            status, value = 400, [{"errorCode": "PROCESSING_HALTED", "message": str(missing)}]
        answers[reference] = (status, value)
        results.append(
            {"body": value, "httpHeaders": {}, "httpStatusCode": status, "referenceId": reference}
        )
        if status >= 400 and all_or_none:
            restore()
            return {"compositeResponse": _rolled_back(results, subrequests)}
    return {"compositeResponse": results}


def _rolled_back(done: list[dict[str, Any]], subrequests: list[Any]) -> list[dict[str, Any]]:
    """Under allOrNone, every other subrequest answers that it was rolled back."""
    failed = done[-1]
    out = []
    for sub in subrequests:
        reference = str(sub.get("referenceId"))
        if reference == failed["referenceId"]:
            out.append(failed)
        else:
            out.append(
                {
                    "body": [ROLLED_BACK],
                    "httpHeaders": {},
                    "httpStatusCode": 400,
                    "referenceId": reference,
                }
            )
    return out


def _resolve(value: Any, answers: dict[str, tuple[int, Any]]) -> Any:
    """`value` with each `@{referenceId.path}` replaced by that earlier answer's value."""
    if isinstance(value, str):
        whole = _REFERENCE.fullmatch(value)
        if whole is not None:
            return _lookup(whole.group(1), whole.group(2), answers)
        return _REFERENCE.sub(lambda m: str(_lookup(m.group(1), m.group(2), answers)), value)
    if isinstance(value, list):
        return [_resolve(item, answers) for item in value]
    if isinstance(value, dict):
        return {key: _resolve(item, answers) for key, item in value.items()}
    return value


def _lookup(reference: str, path: str, answers: dict[str, tuple[int, Any]]) -> Any:
    missing = LookupError(
        f"Invalid reference specified. No value for {reference}.{path} found in {reference}."
    )
    answer = answers.get(reference)
    if answer is None or answer[0] >= 400:
        raise missing
    value = answer[1]
    for name, index in _STEP.findall(path):
        try:
            value = value[int(index)] if index else value[name]
        except (KeyError, IndexError, TypeError):
            raise missing from None
    return value


# -- composite/batch --------------------------------------------------------------------------


def _batch(org: Org, request: Request, user: str) -> dict[str, Any]:
    spec = json_object(request.body)
    subrequests = spec.get("batchRequests")
    if not isinstance(subrequests, list) or not 0 < len(subrequests) <= MAX_SUBREQUESTS:
        raise _bad(f"batchRequests must hold 1 to {MAX_SUBREQUESTS} subrequests", "INVALID_REQUEST")
    halt = spec.get("haltOnError") is True
    results: list[dict[str, Any]] = []
    halted = False
    for sub in subrequests:
        if halted:
            results.append({"statusCode": 412, "result": [HALTED]})
            continue
        sub = sub if isinstance(sub, dict) else {}
        status, value = _sub(
            org,
            str(sub.get("method") or "GET"),
            str(sub.get("url") or ""),
            sub.get("richInput"),
            user,
        )
        results.append({"statusCode": status, "result": value})
        halted = halt and status >= 400
    return {"hasErrors": any(r["statusCode"] >= 400 for r in results), "results": results}


# -- composite/tree ---------------------------------------------------------------------------


def _tree(org: Org, request: Request, version: str, name: str, user: str) -> Reply:
    obj = sobject(name)
    if obj is None:
        raise not_found()
    records = json_object(request.body).get("records")
    if not isinstance(records, list) or not records:
        raise _bad("The request needs a non-empty records list", "INVALID_REQUEST")
    restore = org.savepoint()
    done: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    try:
        for record in records:
            _plant(org, obj, record, {}, user, done, failures)
    except Refused:
        restore()  # a malformed part refuses the whole tree: nothing of it stays
        raise
    if failures:
        restore()
        return _json(400, {"hasErrors": True, "results": failures})
    return _json(201, {"hasErrors": False, "results": done})


def _plant(
    org: Org,
    obj: SObject,
    record: Any,
    parent: dict[str, str],
    user: str,
    done: list[dict[str, Any]],
    failures: list[dict[str, Any]],
) -> None:
    """One record of a tree and its children (by child relationship name), parent first."""
    if not isinstance(record, dict):
        raise _bad("Each record must be a JSON object", "INVALID_REQUEST")
    attributes = record.get("attributes") or {}
    reference = str(attributes.get("referenceId") or "")
    children = {
        key: value
        for key, value in record.items()
        if isinstance(value, dict) and key != "attributes"
    }
    values = {key: value for key, value in record.items() if key not in children}
    outcome = apply(org, "insert", obj, {**values, **parent}, user)
    if not outcome.success:
        failures.append({"referenceId": reference, "errors": [_error(outcome)]})
        return
    done.append({"referenceId": reference, "id": outcome.record_id})
    for relationship, nested in children.items():
        child = child_of(obj, relationship)
        if child is None:
            raise _bad(f"INVALID_FIELD: No such relationship {relationship} on {obj.name}")
        child_obj, field_name = child
        for item in nested.get("records") or []:
            _plant(org, child_obj, item, {field_name: str(outcome.record_id)}, user, done, failures)


# -- composite/sobjects -----------------------------------------------------------------------


def _collection(org: Org, request: Request, version: str, parts: list[str], user: str) -> Reply:
    params = dict(request.params)
    if request.method == "GET" and len(parts) == 1:
        return _json(200, _retrieve(org, version, parts[0], params))
    if parts:
        raise not_found()
    if request.method == "DELETE":
        ids = [i for i in params.get("ids", "").split(",") if i]
        sent = [{"Id": record_id} for record_id in ids]
        return _json(200, _write_all(org, "delete", sent, params.get("allOrNone") == "true", user))
    spec = json_object(request.body)
    records = spec.get("records")
    if request.method not in ("POST", "PATCH") or not isinstance(records, list):
        raise _bad("The request needs a records list", "INVALID_REQUEST")
    if len(records) > MAX_COLLECTION:
        raise _bad(f"A collection holds at most {MAX_COLLECTION} records", "EXCEEDED_ID_LIMIT")
    operation = "insert" if request.method == "POST" else "update"
    return _json(200, _write_all(org, operation, records, spec.get("allOrNone") is True, user))


def _write_all(
    org: Org, operation: str, records: list[Any], all_or_none: bool, user: str
) -> list[dict[str, Any]]:
    restore = org.savepoint()
    outcomes = [_one(org, operation, record, user) for record in records]
    if all_or_none and not all(outcome.success for outcome in outcomes):
        restore()
        return [
            _result(outcome)
            if not outcome.success
            else {
                "id": None,
                "success": False,
                "errors": [
                    {
                        "statusCode": "ALL_OR_NONE_OPERATION_ROLLED_BACK",
                        "message": "Record rolled back because not all records were valid and the "
                        "request was using AllOrNone header",
                        "fields": [],
                    }
                ],
            }
            for outcome in outcomes
        ]
    return [_result(outcome) for outcome in outcomes]


def _one(org: Org, operation: str, record: Any, user: str) -> Outcome:
    record = record if isinstance(record, dict) else {}
    attributes = record.get("attributes") or {}
    name = str(attributes.get("type") or "") if operation != "delete" else ""
    if operation == "delete" or (operation == "update" and not name):
        name = _object_of(str(record.get("Id") or ""))
    obj = sobject(name)
    if obj is None:
        return Outcome({}, code="INVALID_TYPE", message=f"sObject type '{name}' is not supported.")
    values = {key: value for key, value in record.items() if key != "attributes"}
    return apply(org, operation, obj, values, user)


def _object_of(record_id: str) -> str:
    return BY_PREFIX.get(record_id[:3], "")


def _result(outcome: Outcome) -> dict[str, Any]:
    errors = [] if outcome.success else [_error(outcome)]
    return {"id": outcome.record_id, "success": outcome.success, "errors": errors}


def _error(outcome: Outcome) -> dict[str, Any]:
    return {"statusCode": outcome.code, "message": outcome.message, "fields": outcome.fields}


def _retrieve(org: Org, version: str, name: str, params: dict[str, str]) -> list[Any]:
    obj = sobject(name)
    if obj is None:
        raise not_found()
    ids = [i for i in params.get("ids", "").split(",") if i]
    names = [n.strip() for n in params.get("fields", "").split(",") if n.strip()]
    if not ids or not names:
        raise _bad("The ids and fields parameters are required", "INVALID_REQUEST")
    found: list[dict[str, Any] | None] = []
    for record_id in ids:
        try:
            row = org.find(obj.name, record_id)
        except Refused:
            found.append(None)
            continue
        found.append(org.render(obj, row, version, names))
    return found


def _json(status: int, value: Any) -> Reply:
    return json_reply(status, value)
