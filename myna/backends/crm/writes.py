"""What a write of a record may send, and what it may not do to the other records: Salesforce's
field-level checks (unknown, read-only and unique fields, value types, restricted picklists,
references), the access objects' rules (no loop in the role hierarchy or in group nesting, a
profile's own permission set assigned only through the profile, a membership or an assignment
once), and what is not deleted while in use; with the refusals, in Salesforce's words.

Pure functions of what was sent and a `Lookup` of the org's records, so a write is judged by
this one code whoever stores it: the reference org passes itself (its dictionaries when it
writes the corpus, the store's rows when it serves a world, see `extension.StoredOrg`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any, Final, Protocol

from myna.backends.crm.objects import BY_PREFIX, Field, SObject, catalogued
from myna.backends.crm.records import Violation
from myna.backends.crm.rules import Rules
from myna.errors import MockError

Row = dict[str, Any]

# Records not deleted while others point at them: (those others, their reference, the field
# that names the record, why).
IN_USE: Final[Mapping[str, tuple[tuple[str, str, str, str], ...]]] = {
    "UserRole": (
        ("User", "UserRoleId", "Name", "users are assigned to the role"),
        ("UserRole", "ParentRoleId", "Name", "it has subordinate roles"),
    ),
    "PermissionSet": (
        ("PermissionSetAssignment", "PermissionSetId", "Label", "it is assigned to users"),
    ),
}

# The groups the platform keeps for the organization and for each role (the role's own and
# the role with its subordinates): never deleted on their own.
ROLE_GROUPS: Final = frozenset({"Role", "RoleAndSubordinates", "RoleAndSubordinatesInternal"})
ORGANIZATION_GROUP: Final = "Organization"

# Records that may exist once per pair of values: a membership, an assignment.
UNIQUE_PAIRS: Final[Mapping[str, tuple[str, str]]] = {
    "GroupMember": ("GroupId", "UserOrGroupId"),
    "PermissionSetAssignment": ("AssigneeId", "PermissionSetId"),
}

_ID: Final = re.compile(r"^[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?$")


class Lookup(Protocol):
    """The org's records as the rules read them."""

    def record(self, name: str, record_id: str) -> Row | None:
        """The record of object `name` with this 15- or 18-character id, even in the recycle
        bin; None when there is none."""
        ...

    def where(self, name: str, field_name: str, value: str) -> list[Row]:
        """The records of `name` whose `field_name` is `value`."""
        ...

    def every(self, name: str) -> Iterable[Row]:
        """Every record of `name`."""
        ...


class Refused(MockError):
    """A call the org answers with Salesforce's error list instead of a result."""

    kind = "refused"

    def __init__(
        self, status: int, code: str, message: str, fields: Iterable[str] | None = ()
    ) -> None:
        self.status = status
        self.code = code
        self.fields = None if fields is None else list(fields)
        super().__init__(message, status=status, code=code)

    def body(self) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {"message": self.message, "errorCode": self.code}
        if self.fields is not None:
            entry["fields"] = self.fields
        return [entry]


def refuse(violation: Violation | None) -> None:
    """Raise a rule's violation (`records.py`) as the org's refusal; nothing when there is none."""
    if violation is not None:
        raise Refused(violation.status, violation.code, violation.message, violation.fields)


def required_missing(names: list[str]) -> Refused:
    return Refused(
        400, "REQUIRED_FIELD_MISSING", f"Required fields are missing: [{', '.join(names)}]", names
    )


def bad_picklist(spec: Field, value: Any) -> Refused:
    return Refused(
        400,
        "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
        f"{spec.label}: bad value for restricted picklist field: {value}",
        [spec.name],
    )


def delete_failed(label: str, reason: str) -> Refused:
    return Refused(
        400,
        "DELETE_FAILED",
        f"Your attempt to delete {label} could not be completed because {reason}.",
        [],
    )


def not_writable(names: list[str]) -> Refused:
    return Refused(
        400,
        "INVALID_FIELD_FOR_INSERT_UPDATE",
        f"Unable to create/update fields: {', '.join(names)}. Please check the security settings "
        "of this field and verify that it is read/write for your profile or permission set.",
        names,
    )


def _json_token(value: Any) -> str:
    """A JSON value as Salesforce's parser names it in a refusal: its token, then its text."""
    if isinstance(value, dict):
        return "START_OBJECT value {"
    if isinstance(value, list):
        return "START_ARRAY value ["
    if isinstance(value, bool):
        return f"VALUE_{str(value).upper()} value {str(value).lower()}"
    if isinstance(value, int):
        return f"VALUE_NUMBER_INT value {value}"
    if isinstance(value, float):
        return f"VALUE_NUMBER_FLOAT value {value}"
    return f"VALUE_STRING value {value}"


def not_deserialized(kind: str, value: Any) -> Refused:
    """A value of a JSON type the field cannot take (an object or array for any field, text for
    a number or checkbox)."""
    return Refused(
        400,
        "JSON_PARSER_ERROR",
        f"Cannot deserialize instance of {kind} from {_json_token(value)} or request may be "
        "missing a required field",
        None,
    )


# The type Salesforce's parser binds a field's value to, by field type (text otherwise).
_JSON_KINDS: Final[Mapping[str, str]] = {
    "boolean": "boolean",
    "currency": "double",
    "double": "double",
    "percent": "double",
    "int": "int",
    "date": "date",
    "datetime": "datetime",
}


def live(row: Row) -> bool:
    """Not in the recycle bin (records of setup objects are never there: they are deleted)."""
    return not row.get("IsDeleted")


def _group_label(row: Row) -> str:
    """How a refusal names a group: its name; a role's groups have none, only the role's
    developer name."""
    return str(row["Name"] or row["DeveloperName"] or row["Id"])


def checked(
    lookup: Lookup, rules: Rules, obj: SObject, values: Mapping[str, Any], *, creating: bool
) -> Row:
    """The client's values under their API names, after Salesforce's field-level checks."""
    sent: Row = {}
    unknown = [key for key in values if key != "attributes" and not obj.has(key)]
    if unknown:
        raise Refused(
            400,
            "INVALID_FIELD",
            f"No such column '{unknown[0]}' on sobject of type {obj.name}",
            [],
        )
    locked = []
    for key, value in values.items():
        if key == "attributes":
            continue
        spec = obj.field(key)
        writable = spec.createable if creating else spec.updateable
        if not writable:
            locked.append(spec.name)
            continue
        sent[spec.name] = _value(lookup, rules, obj, spec, value)
    if locked:
        raise not_writable(locked)
    for spec in obj.fields:
        if spec.unique and sent.get(spec.name) not in (None, ""):
            for other in lookup.where(obj.name, spec.name, sent[spec.name]):
                if live(other):
                    raise Refused(
                        400,
                        "DUPLICATE_VALUE",
                        f"duplicate value found: {spec.name} duplicates value on record "
                        f"with id: {other['Id']}",
                        [],
                    )
    return sent


def _value(lookup: Lookup, rules: Rules, obj: SObject, spec: Field, value: Any) -> Any:
    if value is None or value == "":
        return None
    kind = _JSON_KINDS.get(spec.type, "string")
    if isinstance(value, dict | list):
        # Every field takes a scalar: Salesforce's parser refuses a JSON object or array.
        raise not_deserialized(kind, value)
    if spec.type == "picklist":
        allowed = rules.allowed(obj.name, spec.name)
        if allowed is not None and value not in allowed:
            raise bad_picklist(spec, value)
        return str(value)
    if spec.type == "boolean":
        if not isinstance(value, bool):
            raise not_deserialized(kind, value)
        return value
    if spec.type in ("currency", "double", "percent"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise not_deserialized(kind, value)
        return float(value)
    if spec.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise not_deserialized(kind, value)
        return value
    if spec.type == "reference":
        return _reference(lookup, spec, str(value))
    if spec.type == "date":
        try:
            return date.fromisoformat(str(value)).isoformat()
        except ValueError:
            raise Refused(
                400,
                "JSON_PARSER_ERROR",
                f"Cannot deserialize value of type `java.util.Date` from String "
                f'"{value}": expected format "yyyy-MM-dd"',
                None,
            ) from None
    return str(value)


def _reference(lookup: Lookup, spec: Field, value: str) -> str:
    target = BY_PREFIX.get(value[:3])
    if _ID.match(value) and target is None and len(catalogued(spec)) < len(spec.reference_to):
        # An id of an object this org does not ship (a user license, a call center): well
        # formed is all that can be checked.
        return value
    if not _ID.match(value) or target is None:
        raise Refused(
            400,
            "MALFORMED_ID",
            f"{spec.label}: id value of incorrect type: {value}",
            [spec.name],
        )
    row = lookup.record(target, value)
    if target not in spec.reference_to or row is None or not live(row):
        raise Refused(
            400,
            "INVALID_CROSS_REFERENCE_KEY",
            "invalid cross reference id",
            [spec.name],
        )
    return str(row["Id"])


def access_rules(lookup: Lookup, name: str, before: Row | None, sent: Row) -> None:
    """The access objects' rules on a write: the role hierarchy and group nesting have no
    loops, and a permission set a profile owns is assigned only through the profile."""
    if name == "UserRole" and before is not None and sent.get("ParentRoleId"):
        parent = lookup.record("UserRole", sent["ParentRoleId"])
        if parent is not None and before["Id"] in _role_chain(lookup, parent["Id"]):
            raise Refused(
                400,
                "CIRCULAR_DEPENDENCY",
                f"The role hierarchy can't loop: {before['Name']} would be above itself "
                f"through {parent['Name']}.",
                ["ParentRoleId"],
            )
    if name == "GroupMember" and sent.get("GroupId") and sent.get("UserOrGroupId"):
        group, member = sent["GroupId"], sent["UserOrGroupId"]
        if group in _nested_groups(lookup, member):
            label = _group_label(lookup.record("Group", group) or {"Id": group})
            raise Refused(
                400,
                "CIRCULAR_DEPENDENCY",
                f"A group can't contain itself: {label} would be a member of itself.",
                ["UserOrGroupId"],
            )
    if name == "PermissionSetAssignment" and of_profile(lookup, sent):
        raise Refused(
            400,
            "INVALID_CROSS_REFERENCE_KEY",
            "Permission Set ID: a permission set a profile owns is assigned through the "
            "profile: change the user's ProfileId instead",
            ["PermissionSetId"],
        )


def _role_chain(lookup: Lookup, role_id: str) -> list[str]:
    """The role and every role above it, nearest first (stopping at a loop a seed has)."""
    chain: list[str] = []
    current: str | None = role_id
    while current is not None and current not in chain:
        chain.append(current)
        role = lookup.record("UserRole", current)
        current = role["ParentRoleId"] if role is not None else None
    return chain


def _nested_groups(lookup: Lookup, member: str) -> set[str]:
    """The group `member` (when it is one) and every group inside it, however deep."""
    found: set[str] = set()
    pending = [member]
    while pending:
        group = pending.pop()
        if group in found or BY_PREFIX.get(group[:3]) != "Group":
            continue
        found.add(group)
        pending.extend(
            str(row["UserOrGroupId"])
            for row in lookup.every("GroupMember")
            if row["GroupId"] == group and row["UserOrGroupId"] is not None
        )
    return found


def unique_pair(lookup: Lookup, name: str, sent: Row) -> None:
    """A user or group joins a group once, and is assigned a permission set once."""
    pair = UNIQUE_PAIRS.get(name)
    if pair is None:
        return
    if any(sent.get(key) is None for key in pair):
        return
    for other in lookup.every(name):
        if all(other[key] == sent[key] for key in pair):
            raise Refused(
                400,
                "DUPLICATE_VALUE",
                "duplicate value found: <unknown> duplicates value on record with id: <unknown>",
                [],
            )


def deletable(lookup: Lookup, name: str, row: Row) -> None:
    """What stays: a role someone holds or with subordinate roles, a permission set assigned
    to anyone, the organization's group and a role's sharing groups (they go with the role),
    and the assignment through which a user holds its profile (it moves with `ProfileId`)."""
    for child, reference, label, reason in IN_USE.get(name, ()):
        if any(live(other) and other[reference] == row["Id"] for other in lookup.every(child)):
            raise delete_failed(row[label], reason)
    if name == "Group" and row["Type"] == ORGANIZATION_GROUP:
        raise delete_failed(_group_label(row), "it is the organization's group")
    if name == "Group" and row["Type"] in ROLE_GROUPS and row["RelatedId"] is not None:
        role = lookup.record("UserRole", row["RelatedId"])
        if role is not None:
            raise delete_failed(
                _group_label(row), f"it is a sharing group of the role {role['Name']}"
            )
    if name == "PermissionSetAssignment" and of_profile(lookup, row):
        raise delete_failed(row["Id"], "it gives the user its profile")


def of_profile(lookup: Lookup, assignment: Row) -> bool:
    """Whether the assignment is of a permission set a profile owns."""
    assigned = assignment.get("PermissionSetId")
    permission_set = lookup.record("PermissionSet", assigned) if assigned else None
    return permission_set is not None and bool(permission_set["IsOwnedByProfile"])
