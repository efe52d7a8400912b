"""Bulk API 2.0 (`/services/data/vNN.N/jobs/ingest|query`, CSV) and Bulk API 1.0
(`/services/async/NN.N/job`, JSON, the `X-SFDC-Session` header) over the org.

Jobs run when they are ready (an ingest job when its upload is complete, a 1.0 batch when it is
added, a query job when it is created), record by record through the org's own create, update,
upsert and delete, so a bulk write obeys every rule a single write does; a record the org
refuses fails alone, with Salesforce's code and message in the results. Written once, for the
reference org and the served one alike (`Org.answer` routes here).
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Callable
from typing import Any, Final

from myna.backends.crm.instance import (
    Org,
    Refused,
    Reply,
    Request,
    external_field,
    json_object,
    json_reply,
    no_content,
    not_found,
)
from myna.backends.crm.jobs import Batch, Job, Outcome
from myna.backends.crm.objects import SObject, sobject
from myna.mocks.dialects.soql import parse_soql
from myna.traces.model import Body

CSV_TYPE: Final = "text/csv"
DELIMITERS: Final = {
    "COMMA": ",",
    "SEMICOLON": ";",
    "TAB": "\t",
    "PIPE": "|",
    "CARET": "^",
    "BACKQUOTE": "`",
}
LINE_ENDINGS: Final = {"LF": "\n", "CRLF": "\r\n"}
INGEST: Final = ("insert", "update", "upsert", "delete", "hardDelete")
QUERIES: Final = ("query", "queryAll")
# A blank cell leaves a field alone; this one sets it to null (Salesforce's convention).
NULL: Final = "#N/A"
_NUMBERS: Final = frozenset({"double", "currency", "percent"})


def _refused(status: int, code: str, message: str) -> Refused:
    return Refused(status, code, message, [])


# -- one record -------------------------------------------------------------------------------


def apply(
    org: Org,
    operation: str,
    obj: SObject,
    sent: dict[str, Any],
    user: str,
    external_id: str | None = None,
) -> Outcome:
    """One record of a bulk or collection write, through the org's own write; a refusal
    becomes the record's failure (the others go on)."""
    outcome = Outcome({key: "" if value is None else str(value) for key, value in sent.items()})
    values = dict(sent)
    try:
        if operation == "insert":
            outcome.record_id, outcome.created = org.create(obj.name, values, user), True
        elif operation == "upsert":
            key = str(values.pop(external_id or "Id", "") or "")
            spec = external_field(obj, external_id or "Id")
            outcome.record_id, outcome.created = org.upsert(obj, spec, key, values, user)
        else:
            record_id = str(values.pop("Id", "") or "")
            row = org.find(obj.name, record_id)
            if operation == "update":
                org.update(obj.name, row["Id"], values, user)
            else:
                org.delete(obj.name, row["Id"], user)
            outcome.record_id = row["Id"]
    except Refused as refusal:
        outcome.code, outcome.message = refusal.code, refusal.message
        outcome.fields = list(refusal.fields or [])
    return outcome


def csv_values(obj: SObject, row: dict[str, str]) -> dict[str, Any]:
    """A CSV record's cells as the org's values: typed by the field, a blank cell left out,
    `#N/A` null. A cell that is not of its field's type refuses the record."""
    values: dict[str, Any] = {}
    for name, text in row.items():
        if text == "":
            continue
        if text == NULL or not obj.has(name):
            values[name] = None if text == NULL else text
            continue
        kind = obj.field(name).type
        try:
            if kind == "boolean":
                values[name] = {"true": True, "false": False, "1": True, "0": False}[text.lower()]
            elif kind == "int":
                values[name] = int(text)
            elif kind in _NUMBERS:
                values[name] = float(text)
            else:
                values[name] = text
        except (KeyError, ValueError):
            raise Refused(
                400,
                "INVALID_TYPE_ON_FIELD_IN_RECORD",
                f"{obj.field(name).name}: value not of required type: {text}",
                [obj.field(name).name],
            ) from None
    return values


def _csv_outcomes(org: Org, job: Job, user: str) -> list[Outcome]:
    obj = _object(job.object)
    outcomes = []
    for row in _read_csv(job.upload, job.delimiter):
        try:
            values = csv_values(obj, row)
        except Refused as refusal:
            outcomes.append(Outcome(row, code=refusal.code, message=refusal.message))
            continue
        outcome = apply(org, job.operation, obj, values, user, job.external_id)
        outcome.sent = row
        outcomes.append(outcome)
    return outcomes


def _read_csv(text: str, delimiter: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text), delimiter=DELIMITERS[delimiter])
    try:
        return [{key: value or "" for key, value in row.items() if key} for row in reader]
    except csv.Error as error:  # a cell past the csv module's size limit, for one
        raise _refused(400, "INVALIDBATCH", f"InvalidBatch : CSV not parsed: {error}") from None


def _write_csv(header: list[str], rows: list[list[str]], job: Job) -> str:
    out = io.StringIO()
    writer = csv.writer(
        out,
        delimiter=DELIMITERS[job.delimiter],
        lineterminator=LINE_ENDINGS[job.line_ending],
        quoting=csv.QUOTE_ALL,
    )
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _object(name: str) -> SObject:
    obj = sobject(name)
    if obj is None:
        raise _refused(400, "INVALIDENTITY", f"Entity '{name}' is not supported by the Bulk API.")
    return obj


# -- Bulk API 2.0 -------------------------------------------------------------------------------


def jobs_call(org: Org, request: Request, version: str, parts: list[str], user: str) -> Reply:
    """`jobs/ingest[/{id}[/batches|/successfulResults|...]]` and `jobs/query[/{id}[/results]]`."""
    kind = parts[1] if len(parts) > 1 else ""
    if kind not in ("ingest", "query"):
        raise not_found()
    if len(parts) == 2 and request.method == "POST":
        return _json(201 if kind == "ingest" else 200, _new_job(org, request, version, kind, user))
    if len(parts) == 2 and request.method == "GET":
        listed = [_info(job) for job in org.jobs.values() if job.kind == kind]
        return _json(200, {"done": True, "records": listed, "nextRecordsUrl": None})
    job = org.jobs.get(parts[2]) if len(parts) > 2 else None
    if job is None or job.kind != kind:
        raise _refused(404, "NOT_FOUND", "The requested resource does not exist")
    if len(parts) == 3:
        return _job_call(org, request, job, user)
    return _job_data(org, request, job, parts[3])


def _new_job(org: Org, request: Request, version: str, kind: str, user: str) -> dict[str, Any]:
    spec = json_object(request.body)
    operation = str(spec.get("operation") or "")
    if operation not in (QUERIES if kind == "query" else INGEST):
        raise _refused(400, "INVALIDJOB", f"InvalidJob : Invalid job operation: {operation}")
    delimiter = str(spec.get("columnDelimiter") or "COMMA")
    line_ending = str(spec.get("lineEnding") or "LF")
    if delimiter not in DELIMITERS or line_ending not in LINE_ENDINGS:
        raise _refused(400, "INVALIDJOB", "InvalidJob : Invalid column delimiter or line ending")
    job = Job(
        id=org.new_id("750"),
        kind=kind,
        operation=operation,
        object="",
        version=version,
        created_by=user,
        created=org.stamp(),
        state="Open",
        external_id=spec.get("externalIdFieldName"),
        delimiter=delimiter,
        line_ending=line_ending,
        modstamp=org.stamp(),
    )
    if kind == "query":
        job.query = str(spec.get("query") or "")
        _run_query(org, job, version)
    else:
        job.object = _object(str(spec.get("object") or "")).name
        if operation == "upsert" and not job.external_id:
            raise _refused(400, "INVALIDJOB", "InvalidJob : External ID was blank for upsert")
    org.jobs[job.id] = job
    return _info(job, brief=True)


def _run_query(org: Org, job: Job, version: str) -> None:
    """A query job runs as it is made: its records, flattened to CSV columns."""
    answer = org.query(job.query or "", version, job.operation == "queryAll", sys.maxsize)
    job.object = parse_soql(job.query or "", now=org.now).object_name
    flat = [_flatten(record) for record in answer["records"]]
    job.columns = list(flat[0]) if flat else _selected(job.query or "")
    job.rows = [[_cell(record.get(column)) for column in job.columns] for record in flat]
    job.state = "JobComplete"


def _selected(soql: str) -> list[str]:
    """A query's column names when it found nothing (the header still names them)."""
    head = soql.split(" FROM ")[0].split(" from ")[0]
    return [name.strip() for name in head.split(None, 1)[-1].split(",") if name.strip()]


def _flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if key == "attributes":
            continue
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _job_call(org: Org, request: Request, job: Job, user: str) -> Reply:
    if request.method == "GET":
        return _json(200, _info(job))
    if request.method == "DELETE":
        if job.state in ("Open", "UploadComplete", "InProgress"):
            raise _refused(400, "INVALIDJOBSTATE", "Deleting a job that is open is not allowed")
        del org.jobs[job.id]
        return no_content()
    if request.method != "PATCH":
        raise not_found()
    state = str(json_object(request.body).get("state") or "")
    if state == "Aborted" and job.state not in ("JobComplete", "Failed"):
        job.state = "Aborted"
    elif state == "UploadComplete" and job.kind == "ingest" and job.state == "Open":
        job.outcomes = _csv_outcomes(org, job, user)
        job.state = "JobComplete"
    else:
        raise _refused(400, "INVALIDJOBSTATE", f"Cannot change the job's state to {state}")
    job.modstamp = org.stamp()
    return _json(200, _info(job, brief=True))


def _job_data(org: Org, request: Request, job: Job, what: str) -> Reply:
    if what == "batches" and request.method == "PUT" and job.kind == "ingest":
        if job.state != "Open":
            raise _refused(400, "INVALIDJOBSTATE", "The job isn't open for uploads")
        text = request.body.value if isinstance(request.body.value, str) else ""
        # A second upload adds records: its header row goes.
        job.upload += text if not job.upload else text.split("\n", 1)[-1]
        return Reply(201, Body())
    if request.method != "GET":
        raise not_found()
    if job.kind == "query" and what == "results":
        return _query_page(job, request)
    pick: dict[str, Callable[[Job], str]] = {
        "successfulResults": _successful,
        "failedResults": _failed,
        "unprocessedrecords": _unprocessed,
    }
    if job.kind != "ingest" or what not in pick:
        raise not_found()
    return _csv(pick[what](job))


def _originals(job: Job) -> list[str]:
    first = next(iter(_read_csv(job.upload, job.delimiter)), {})
    return list(first)


def _successful(job: Job) -> str:
    columns = _originals(job)
    rows = [
        [o.record_id or "", "true" if o.created else "false", *(o.sent.get(c, "") for c in columns)]
        for o in job.outcomes
        if o.success
    ]
    return _write_csv(["sf__Id", "sf__Created", *columns], rows, job)


def _failed(job: Job) -> str:
    columns = _originals(job)
    rows = [
        [o.record_id or "", _error_text(o), *(o.sent.get(c, "") for c in columns)]
        for o in job.outcomes
        if not o.success
    ]
    return _write_csv(["sf__Id", "sf__Error", *columns], rows, job)


def _error_text(outcome: Outcome) -> str:
    """`CODE:message:fields --`, as Salesforce writes a failed record's error."""
    return f"{outcome.code}:{outcome.message}:{','.join(outcome.fields)} --"


def _unprocessed(job: Job) -> str:
    columns = _originals(job)
    done = job.state == "JobComplete"
    rows = (
        []
        if done
        else [[row.get(c, "") for c in columns] for row in _read_csv(job.upload, job.delimiter)]
    )
    return _write_csv(columns, rows, job)


def _query_page(job: Job, request: Request) -> Reply:
    params = dict(request.params)
    start = int(params["locator"]) if params.get("locator", "").isdigit() else 0
    size = params.get("maxRecords", "")
    count = int(size) if size.isdigit() and int(size) > 0 else len(job.rows) or 1
    page = job.rows[start : start + count]
    following = start + count
    locator = str(following) if following < len(job.rows) else "null"
    reply = _csv(_write_csv(job.columns, page, job))
    reply.headers.extend([("Sforce-Locator", locator), ("Sforce-NumberOfRecords", str(len(page)))])
    return reply


def _info(job: Job, *, brief: bool = False) -> dict[str, Any]:
    """The job as Bulk API 2.0 describes it (`brief`: as a create or state change answers)."""
    info: dict[str, Any] = {
        "id": job.id,
        "operation": job.operation,
        "object": job.object,
        "createdById": job.created_by,
        "createdDate": job.created,
        "systemModstamp": job.modstamp,
        "state": job.state,
    }
    if job.external_id:
        info["externalIdFieldName"] = job.external_id
    info.update(
        concurrencyMode="Parallel",
        contentType="CSV",
        apiVersion=float(job.version.lstrip("v")),
        lineEnding=job.line_ending,
        columnDelimiter=job.delimiter,
    )
    if job.kind == "ingest":
        info["contentUrl"] = f"services/data/{job.version}/jobs/ingest/{job.id}/batches"
    if brief:
        return info
    failed = sum(1 for outcome in job.outcomes if not outcome.success)
    processed = len(job.rows) if job.kind == "query" else len(job.outcomes)
    info.update(
        jobType="V2Query" if job.kind == "query" else "V2Ingest",
        numberRecordsProcessed=processed,
        retries=0,
        totalProcessingTime=0,
        apiActiveProcessingTime=0,
        apexProcessingTime=0,
    )
    if job.kind == "ingest":
        info["numberRecordsFailed"] = failed
    return info


def _json(status: int, value: Any) -> Reply:
    return json_reply(status, value)


def _csv(text: str) -> Reply:
    return Reply(200, Body("text", text, CSV_TYPE), [("Content-Type", "text/csv; charset=UTF-8")])


# -- Bulk API 1.0 -------------------------------------------------------------------------------


class AsyncError(Exception):
    """A Bulk API 1.0 refusal: its own shape, `{exceptionCode, exceptionMessage}`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def reply(self) -> Reply:
        return _json(self.status, {"exceptionCode": self.code, "exceptionMessage": self.message})


def async_call(org: Org, request: Request, version: str, parts: list[str]) -> Reply:
    """`/services/async/NN.N/job[/{id}[/batch[/{id}[/result[/{id}]|/request]]]]`."""
    try:
        user = org.sessions.get(request.token or request.header("X-SFDC-Session") or "")
        if user is None:
            raise AsyncError(400, "InvalidSessionId", "Invalid session id")
        if not parts or parts[0] != "job":
            raise AsyncError(404, "InvalidUrl", "Destination URL not reset. The URL was invalid.")
        if len(parts) == 1 and request.method == "POST":
            return _json(201, _async_info(_new_async_job(org, request, version, user)))
        job = org.jobs.get(parts[1]) if len(parts) > 1 else None
        if job is None or job.kind != "async":
            raise AsyncError(400, "InvalidJob", f"Unable to find job by id: {parts[1:2]}")
        if len(parts) == 2:
            return _async_job_call(org, request, job)
        return _batch_call(org, request, job, parts[2:], user)
    except AsyncError as refusal:
        return refusal.reply()


def _new_async_job(org: Org, request: Request, version: str, user: str) -> Job:
    spec = json_object(request.body)
    operation = str(spec.get("operation") or "")
    if operation not in (*INGEST, *QUERIES):
        raise AsyncError(400, "InvalidJob", f"Invalid operation: {operation}")
    obj = sobject(str(spec.get("object") or ""))
    if obj is None:
        raise AsyncError(400, "InvalidJob", f"Unable to find object: {spec.get('object')}")
    job = Job(
        id=org.new_id("750"),
        kind="async",
        operation=operation,
        object=obj.name,
        version=version,
        created_by=user,
        created=org.stamp(),
        state="Open",
        external_id=spec.get("externalIdFieldName"),
        modstamp=org.stamp(),
    )
    org.jobs[job.id] = job
    return job


def _async_job_call(org: Org, request: Request, job: Job) -> Reply:
    if request.method == "POST":
        state = str(json_object(request.body).get("state") or "")
        if state not in ("Closed", "Aborted"):
            raise AsyncError(400, "InvalidJobState", f"Invalid state: {state}")
        job.state, job.modstamp = state, org.stamp()
    elif request.method != "GET":
        raise AsyncError(405, "InvalidUrl", f"{request.method} is not allowed here")
    return _json(200, _async_info(job))


def _batch_call(org: Org, request: Request, job: Job, parts: list[str], user: str) -> Reply:
    if parts[0] != "batch":
        raise AsyncError(404, "InvalidUrl", "Destination URL not reset. The URL was invalid.")
    if len(parts) == 1 and request.method == "POST":
        if job.state != "Open":
            raise AsyncError(400, "InvalidJobState", f"Job {job.id} is not open")
        return _json(201, _batch_info(job, _run_batch(org, request, job, user)))
    if len(parts) == 1:
        return _json(200, {"batchInfo": [_batch_info(job, b) for b in job.batches.values()]})
    batch = job.batches.get(parts[1])
    if batch is None:
        raise AsyncError(400, "InvalidBatch", f"Unable to find batch for id: {parts[1]}")
    if len(parts) == 2:
        return _json(200, _batch_info(job, batch))
    if parts[2] == "request":
        return _json(200, batch.request)
    if parts[2] != "result":
        raise AsyncError(404, "InvalidUrl", "Destination URL not reset. The URL was invalid.")
    if batch.records is None:
        return _json(200, [_async_result(outcome) for outcome in batch.outcomes])
    if len(parts) == 3:
        return _json(200, [f"752{batch.id[3:]}"])
    return _json(200, batch.records)


def _run_batch(org: Org, request: Request, job: Job, user: str) -> Batch:
    batch = Batch(org.new_id("751"), org.stamp(), request=request.body.value)
    obj = _object(job.object)
    if job.operation in QUERIES:
        soql = str(request.body.value or "").strip()
        try:
            answer = org.query(soql, f"v{job.version}", job.operation == "queryAll", sys.maxsize)
            batch.records = answer["records"]
        except Refused as refusal:
            batch.failure, batch.records = f"{refusal.code} : {refusal.message}", []
    elif isinstance(request.body.value, list):
        batch.outcomes = [
            apply(org, job.operation, obj, dict(sent), user, job.external_id)
            for sent in request.body.value
            if isinstance(sent, dict)
        ]
    else:
        batch.failure = "InvalidBatch : Records not found"
    job.batches[batch.id] = batch
    return batch


def _async_result(outcome: Outcome) -> dict[str, Any]:
    errors = (
        []
        if outcome.success
        else [
            {
                "fields": outcome.fields,
                "message": outcome.message,
                "statusCode": outcome.code,
                "extendedErrorDetails": None,
            }
        ]
    )
    return {
        "success": outcome.success,
        "created": outcome.created,
        "id": outcome.record_id,
        "errors": errors,
    }


def _batch_info(job: Job, batch: Batch) -> dict[str, Any]:
    processed = len(batch.records) if batch.records is not None else len(batch.outcomes)
    return {
        "apexProcessingTime": 0,
        "apiActiveProcessingTime": 0,
        "createdDate": batch.created,
        "id": batch.id,
        "jobId": job.id,
        "numberRecordsFailed": sum(1 for outcome in batch.outcomes if not outcome.success),
        "numberRecordsProcessed": processed,
        "state": "Failed" if batch.failure else "Completed",
        "stateMessage": batch.failure,
        "systemModstamp": batch.created,
        "totalProcessingTime": 0,
    }


def _async_info(job: Job) -> dict[str, Any]:
    batches = list(job.batches.values())
    failed = sum(1 for batch in batches if batch.failure)
    return {
        "apexProcessingTime": 0,
        "apiActiveProcessingTime": 0,
        "apiVersion": float(job.version),
        "assignmentRuleId": None,
        "concurrencyMode": "Parallel",
        "contentType": "JSON",
        "createdById": job.created_by,
        "createdDate": job.created,
        "externalIdFieldName": job.external_id,
        "id": job.id,
        "numberBatchesCompleted": len(batches) - failed,
        "numberBatchesFailed": failed,
        "numberBatchesInProgress": 0,
        "numberBatchesQueued": 0,
        "numberBatchesTotal": len(batches),
        "numberRecordsFailed": sum(
            1 for batch in batches for outcome in batch.outcomes if not outcome.success
        ),
        "numberRecordsProcessed": sum(
            len(b.records) if b.records is not None else len(b.outcomes) for b in batches
        ),
        "numberRetries": 0,
        "object": job.object,
        "operation": job.operation,
        "state": job.state,
        "systemModstamp": job.modstamp,
        "totalProcessingTime": 0,
    }
