"""The service model: what Myna learned about a service, with the evidence for every fact.

These pydantic models are the contract between learning (`myna.schemas`) and serving
(`myna.mocks`). On disk the model is OpenAPI 3.1 YAML: resources become `components.schemas`
with `x-myna-resource` and per-property `x-myna-field` extensions, operations become `paths`
with `x-myna-operation`, and conventions live in the top-level `x-myna-conventions`
(see `myna.schemas.openapi`). A person can review and edit that file; `pinned` facts survive
re-learning.

Paths in operations and resources are full URL paths as the client sends them
(`/api/now/table/incident/{sys_id}`), so a mock can mount them unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from myna.errors import ModelError

JsonSchema = dict[str, Any]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Evidence(_Model):
    """Why Myna believes a fact: how often it was seen, where, and how sure it is."""

    samples: int = 0
    sessions: int = 0
    examples: list[str] = Field(default_factory=list, description="a few source exchange ids")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    pinned: bool = Field(default=False, description="set by a person; re-learning keeps it")


IdKind = Literal[
    "hex32",  # ServiceNow sys_id: 32 lowercase hex digits
    "uuid",
    "ulid",
    "integer",  # 1, 2, 3 ... (auto-increment)
    "sequence",  # a prefix and a zero-padded counter: INC0010001, PROJ-123
    "salesforce",  # 18-character id starting with a 3-character key prefix
    "prefixed",  # a literal prefix and random alphanumerics: cus_9s8d7f...
    "opaque",  # anything else: random URL-safe token of the observed length
]


class IdFormat(_Model):
    """How values of an id-like field look, so the mock can mint new ones that match."""

    kind: IdKind
    prefix: str = ""
    width: int = Field(default=0, description="digits of a sequence, or length of a token")
    start: int = Field(default=1, description="first number of a sequence or integer id")
    pattern: str | None = Field(default=None, description="regular expression values match")


ReferenceStyle = Literal[
    "link_value",  # ServiceNow: {"link": ".../table/sys_user/<id>", "value": "<id>"}
    "id",  # a bare id string or number
    "object",  # a nested object carrying the target's id field
]


class Reference(_Model):
    """A field whose values are ids of another resource's records."""

    resource: str
    style: ReferenceStyle = "id"
    evidence: Evidence = Field(default_factory=Evidence)


class FieldSpec(_Model):
    """One field of a resource's records, its JSON Schema and its learned roles."""

    name: str
    schema_: JsonSchema = Field(default_factory=dict, alias="schema")
    required: bool = Field(default=False, description="present in every observed record")
    nullable: bool = False
    server_generated: bool = Field(default=False, description="in responses, never in requests")
    read_only: bool = Field(default=False, description="clients cannot change it")
    write_policy: Literal["ignore", "refuse"] = Field(
        default="ignore",
        description="what the service did when a request set a read-only field: drop it or 4xx",
    )
    required_on_create: bool = False
    immutable: bool = Field(default=False, description="never changes after create")
    has_default: bool = False
    default: Any = None
    generator: IdFormat | None = Field(default=None, description="how the server mints values")
    reference: Reference | None = None
    stamp: Literal["caller"] | None = Field(
        default=None,
        description="`caller`: the service fills this reference on create with the record of "
        "whoever called (who opened a ticket), unless the request names one",
    )
    enum_frequencies: dict[str, int] | None = Field(
        default=None, description="observed counts per enum value, for seeding"
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="value -> the label a rendering shows for it where they differ ('2' -> "
        "'In Progress'; a reference's id -> its record's name), from the answers that showed both",
    )
    evidence: Evidence = Field(default_factory=Evidence)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Transition(_Model):
    """A state change the service accepted (or, in `RefusedTransition`, refused)."""

    source: str | None = Field(description="state before; None means on create")
    target: str
    operation: str | None = Field(default=None, description="operationId that caused it")
    evidence: Evidence = Field(default_factory=Evidence)


class RefusedTransition(_Model):
    source: str | None
    target: str
    status: int
    message: str | None = None
    operation: str | None = None
    evidence: Evidence = Field(default_factory=Evidence)


class EntryValues(_Model):
    """The values a service writes into a record's fields when the record enters one state."""

    values: dict[str, JsonValue] = Field(
        description="field -> the value it holds after every entry (as the service renders it)"
    )
    evidence: Evidence = Field(default_factory=Evidence)


class StateMachine(_Model):
    """The life cycle of one status-like field of a resource."""

    field: str
    states: list[str]
    labels: dict[str, str] = Field(
        default_factory=dict, description="display names for coded states: {'6': 'Resolved'}"
    )
    initial: list[str] = Field(default_factory=list, description="states records are created in")
    transitions: list[Transition] = Field(default_factory=list)
    refused: list[RefusedTransition] = Field(default_factory=list)
    required_on_entry: dict[str, list[str]] = Field(
        default_factory=dict, description="state -> fields always set when it is entered"
    )
    changes_on_entry: dict[str, list[str]] = Field(
        default_factory=dict, description="state -> fields that change with entering it"
    )
    sets_on_entry: dict[str, EntryValues] = Field(
        default_factory=dict,
        description="state -> the values the service sets when a record enters it "
        "(Closed Won: Probability 100, IsClosed true); a client may still send its own",
    )
    callers_on_entry: dict[str, list[str]] = Field(
        default_factory=dict,
        description="state -> references the service fills with whoever made the call when "
        "a record enters it (resolved_by on Resolved)",
    )
    enforce: bool = Field(default=True, description="refuse transitions that were never observed")
    refusal_status: int | None = Field(
        default=None,
        description="what the service answered writes it refused into this machine's states "
        "(ServiceNow: 403), for the mock's own refusals; None: its usual 400 or 422",
    )
    evidence: Evidence = Field(default_factory=Evidence)


class ViewField(_Model):
    """One value of a view: taken from the viewed record, or a constant the service writes."""

    path: list[str] = Field(description="where the value sits in the view, key by key")
    source: list[str] | None = Field(
        default=None,
        description="where it comes from in the viewed record's answer; `*` joins the text "
        "of every item of a list (a title written in several runs of rich text)",
    )
    value: JsonValue = Field(
        default=None,
        description="the constant when `source` is None, else the usual value the service "
        "showed, for a record without the source",
    )


class View(_Model):
    """How a resource's paths answer a record of another resource they also address, in
    their own shape (Notion answers a page deleted at /blocks/{id} as a `child_page` block),
    learned by where each value of the recorded answers came from."""

    source: str = Field(description="the resource whose records are shown this way")
    fields: list[ViewField] = Field(default_factory=list)
    evidence: Evidence = Field(default_factory=Evidence)


class Rendering(_Model):
    """Another rendering of every record, answered when the request's query parameters ask for
    it (every field as `{display_value, value}`, or as its label): each field is rendered from
    what the plain answer shows, by a template whose values come from the field's `value`,
    its `label` (`FieldSpec.labels`, else a referenced record's display field, else the value)
    or its `link` (a reference's), traced back from the recorded answers as views are."""

    params: dict[str, str] = Field(description="the query parameters that select it")
    value: list[ViewField] = Field(
        default_factory=list,
        description="how a field holding a plain value is rendered; a path [] is the whole field",
    )
    reference: list[ViewField] = Field(
        default_factory=list, description="how a reference (`{link, value}`) is rendered"
    )
    formats: dict[str, list[ViewField]] = Field(
        default_factory=dict,
        description="values of a format rendered their own way (every timestamp with a "
        "`display_value_internal`), by the format's name",
    )
    fields: dict[str, list[ViewField]] = Field(
        default_factory=dict,
        description="fields rendered their own way where they hold a value, before their "
        "format's way and their kind's",
    )
    evidence: Evidence = Field(default_factory=Evidence)


class Resource(_Model):
    """A kind of record the service stores, with its collection and item paths."""

    name: str
    collection_path: str | None = None
    item_path: str | None = None
    id_field: str
    id_format: IdFormat
    fields: dict[str, FieldSpec] = Field(default_factory=dict)
    display_field: str | None = Field(default=None, description="human label, e.g. number")
    unique: list[str] = Field(default_factory=list, description="fields unique across records")
    keys: list[str] = Field(
        default_factory=list,
        description="fields other than the id that item paths name a record by, as the traces "
        "showed (an issue read at /issue/JJJ-9 whose `key` is JJJ-9)",
    )
    state_machines: list[StateMachine] = Field(default_factory=list)
    envelope: Envelope | None = Field(
        default=None,
        description="how this resource's bodies are wrapped, where it differs from the "
        'service\'s (`{"tickets": [...]}` beside `{"agents": [...]}`)',
    )
    also: list[str] = Field(
        default_factory=list,
        description="other resources whose records this one's item paths also address, as "
        "the traces showed (Notion deletes a page at /blocks/{id}: a page is a block)",
    )
    views: list[View] = Field(
        default_factory=list,
        description="how this resource's paths render those other resources' records",
    )
    inputs: dict[str, JsonSchema] = Field(
        default_factory=dict,
        description="fields writes send that no answer ever showed (Notion's `children` on a "
        "new page): accepted, and not stored as part of the record",
    )
    records: list[dict[str, JsonValue]] = Field(
        default_factory=list,
        description="records the traces showed, as the service stored them: a served mock "
        "starts with them (written as the schema's `examples`)",
    )
    evidence: Evidence = Field(default_factory=Evidence)


OperationKind = Literal[
    "list", "get", "create", "update", "replace", "delete", "action", "query", "auth", "other"
]
ParamLocation = Literal["path", "query", "header"]


class Parameter(_Model):
    name: str
    location: ParamLocation
    required: bool = False
    schema_: JsonSchema = Field(default_factory=dict, alias="schema")
    role: Literal[
        "id", "filter", "query", "limit", "offset", "page", "cursor", "sort", "fields", "other"
    ] = "other"
    evidence: Evidence = Field(default_factory=Evidence)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ResponseSpec(_Model):
    status: int
    schema_: JsonSchema | None = Field(default=None, alias="schema")
    headers: dict[str, JsonSchema] = Field(default_factory=dict)
    example: Any = None
    evidence: Evidence = Field(default_factory=Evidence)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Effect(_Model):
    """What a custom action does to its record: set a field, or move a state machine."""

    field: str
    from_request: str | None = Field(
        default=None, description="JSON pointer into the request body giving the new value"
    )
    value: Any = None


class RecordedAnswer(_Model):
    """One answer the service gave an operation, replayed by a mock that cannot simulate the
    operation (its records belong to no resource of the model): the answer recorded for the
    request whose parameters match best."""

    params: dict[str, str] = Field(
        default_factory=dict, description="path parameters ({name}) and query parameters sent"
    )
    sent: dict[str, str] = Field(
        default_factory=dict,
        description="the request body's top-level values (a search sent as a POST body)",
    )
    status: int
    headers: dict[str, str] = Field(default_factory=dict)
    body: JsonValue = Field(default=None, description="the JSON body (None: no body or text)")
    text: str | None = Field(default=None, description="a body that was not JSON")
    anonymous: bool = Field(
        default=False,
        description="given to a request without a credential (a service may tell anonymous "
        "callers less: no server time, a login redirect)",
    )
    evidence: Evidence = Field(default_factory=Evidence)


class Upload(_Model):
    """How a create that takes a file instead of JSON makes its record (`myna.schemas.uploads`)."""

    query_fields: dict[str, str] = Field(
        default_factory=dict, description="query parameter -> the record field it fills"
    )
    size_field: str | None = Field(default=None, description="the field holding the byte count")
    type_field: str | None = Field(default=None, description="the field holding the media type")
    evidence: Evidence = Field(default_factory=Evidence)


class Inference(_Model):
    """Why an operation the traces never showed is served: the convention that implies it."""

    convention: str = Field(description="the rule and what it was read from")
    confidence: float = Field(ge=0.0, le=1.0)


class ToolDefinition(_Model):
    """How a tool-call service described one of its tools (an MCP `tools/list` entry, an agent
    transcript's `tools`): the mock offers the tool with these words and this schema again."""

    description: str | None = None
    input_schema: JsonSchema | None = None


class Operation(_Model):
    id: str = Field(description="operationId, unique in the model")
    method: str
    path: str
    kind: OperationKind
    resource: str | None = None
    summary: str | None = None
    parameters: list[Parameter] = Field(default_factory=list)
    request_schema: JsonSchema | None = None
    responses: list[ResponseSpec] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    recorded: list[RecordedAnswer] = Field(
        default_factory=list,
        description="answers replayed when the operation ties to no resource",
    )
    scope: str | None = Field(
        default=None,
        description="on a collection under a parent (`/groups/{id}/projects`): the record "
        "field, a dotted path into nested objects, holding the id the path's last parameter "
        "names; the list shows only that parent's records and a create belongs to it",
    )
    view: View | None = Field(
        default=None,
        description="on an item operation whose answers are another shape of its resource's "
        "record (a page's `page_markdown`): how that shape is made from the record",
    )
    target: str | None = Field(
        default=None,
        description="on a get at a path without parameters: the id of the record it always "
        "answered (GET /users/me: the caller's user record)",
    )
    batch: str | None = Field(
        default=None,
        description="on a create: the request key holding a list of records made at once "
        "(Notion appends `children` to a block); the answer lists what was made",
    )
    upload: Upload | None = Field(
        default=None,
        description="on a create that takes a file as its body: which record fields the "
        "query, the file's size and its media type fill",
    )
    envelope: Envelope | None = Field(
        default=None,
        description="on a list: how its answers are wrapped where that differs from its "
        "resource's lists (a search's `{total_count, items}` beside bare lists)",
    )
    public: bool = Field(
        default=False,
        description="the service answered it to callers that sent no credential (a version "
        "or status endpoint, a redirect to its login page): the mock does too, in the worlds "
        "an anonymous caller may reach",
    )
    inferred: Inference | None = Field(
        default=None,
        description="set when no exchange showed the operation: completed by "
        "the convention named here",
    )
    tool: ToolDefinition | None = Field(
        default=None, description="the tool this operation was learned from, as its service put it"
    )
    evidence: Evidence = Field(default_factory=Evidence)


EnvelopeStyle = Literal["bare", "wrapped"]


class Envelope(_Model):
    """How bodies are wrapped: `{"result": ...}`, `{"records": [...], "totalSize": n}`, bare."""

    style: EnvelopeStyle = "bare"
    item_key: str | None = Field(default=None, description="key around a single record")
    list_key: str | None = Field(default=None, description="key around a list of records")
    total_key: str | None = None
    next_key: str | None = None
    done_key: str | None = None
    record_attributes: bool = Field(
        default=False, description="records carry Salesforce-style {'attributes': {type, url}}"
    )
    request_key: str | None = Field(
        default=None, description='key around the record a write sends (`{"ticket": {...}}`)'
    )
    extra: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="other keys beside a list, with the value they held "
        '(`"object": "list"`); a null value says only the key is always there',
    )
    evidence: Evidence = Field(default_factory=Evidence)


PaginationStyle = Literal["none", "limit_offset", "page", "cursor", "next_url"]


class Pagination(_Model):
    style: PaginationStyle = "none"
    limit_param: str | None = None
    offset_param: str | None = None
    page_param: str | None = None
    cursor_param: str | None = None
    default_limit: int | None = None
    max_limit: int | None = None
    link_header: bool = Field(default=False, description="RFC 8288 Link with first/prev/next/last")
    total_header: str | None = Field(default=None, description="e.g. X-Total-Count")
    evidence: Evidence = Field(default_factory=Evidence)


class ErrorShape(_Model):
    """The body the service answers errors with, as a template.

    String leaves may hold `{message}`, `{detail}`, `{code}` and `{field}` placeholders that the
    mock fills in; `{fields}` as a whole leaf becomes the list of offending field names.
    """

    status: int | None = Field(default=None, description="None: the shape for every status")
    template: Any
    headers: dict[str, str] = Field(default_factory=dict)
    evidence: Evidence = Field(default_factory=Evidence)


AuthScheme = Literal["none", "basic", "bearer", "apikey", "oauth2", "unknown"]
"""`unknown`: the traces show a credential in `Auth.header` whose scheme was redacted with it;
the mock still requires a configured credential there, in whichever form it comes."""


class Auth(_Model):
    scheme: AuthScheme = "none"
    header: str | None = Field(default=None, description="header carrying an API key")
    token_path: str | None = Field(default=None, description="OAuth2 token endpoint path")
    unauthorized_status: int = 401
    unauthorized_headers: dict[str, str] = Field(default_factory=dict)
    unauthorized_body: Any = None
    evidence: Evidence = Field(default_factory=Evidence)


class Conventions(_Model):
    envelope: Envelope = Field(default_factory=Envelope)
    pagination: Pagination = Field(default_factory=Pagination)
    errors: list[ErrorShape] = Field(default_factory=list)
    auth: Auth = Field(default_factory=Auth)
    values_as_strings: bool = Field(
        default=False, description="numbers and booleans travel as strings (ServiceNow)"
    )
    datetime_format: str | None = Field(
        default=None, description="strftime format of timestamps, e.g. %Y-%m-%d %H:%M:%S"
    )
    query_language: Literal["fields", "servicenow", "soql", "jql"] = Field(
        default="fields",
        description="how list filters are written: ?field=value, sysparm_query, SOQL or JQL",
    )
    renderings: list[Rendering] = Field(
        default_factory=list,
        description="other renderings of the records that query parameters select",
    )
    partial_put: bool = Field(
        default=False,
        description="a PUT changes only the fields it sends, as a PATCH does: its answers kept "
        "the values of writable fields it left out",
    )


class ServiceModel(_Model):
    """A whole service: its conventions, resources and operations."""

    name: str
    title: str | None = None
    version: str = "1"
    servers: list[str] = Field(default_factory=list, description="observed base URLs")
    base_path: str = ""
    conventions: Conventions = Field(default_factory=Conventions)
    resources: dict[str, Resource] = Field(default_factory=dict)
    operations: list[Operation] = Field(default_factory=list)
    extensions: list[str] = Field(
        default_factory=list,
        description="service extensions the runtime applies, by name (myna.mocks.extensions)",
    )

    def operation(self, operation_id: str) -> Operation:
        for operation in self.operations:
            if operation.id == operation_id:
                return operation
        raise ModelError(f"no operation {operation_id!r}", path=f"{self.name}.operations")

    def envelope_of(self, resource: str | None) -> Envelope:
        """How a resource's bodies are wrapped: its own envelope, else the service's."""
        found = self.resources.get(resource) if resource is not None else None
        if found is not None and found.envelope is not None:
            return found.envelope
        return self.conventions.envelope

    def error_shape(self, status: int) -> ErrorShape | None:
        by_status = {shape.status: shape for shape in reversed(self.conventions.errors)}
        return by_status.get(status) or by_status.get(None)
