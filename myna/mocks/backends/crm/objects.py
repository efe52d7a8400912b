"""The Salesforce objects the CRM back end ships, as their describe results present them.

This catalogue is what the reference org (`myna.mocks.backends.crm.instance`) stores records by
and answers `describe` from: each field's API name, SOAP-style type, label, picklist values,
reference target and relationship name, and whether the API may set it on create or update.
Field lists follow the standard objects of a Developer Edition org (Sales and Service Cloud),
trimmed to the fields an integration touches; key prefixes are Salesforce's own.

Fields are written one per line, `Name type [flags] [-> Target.Relationship] [label]`, because a
dataclass literal per field would bury the facts in punctuation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from myna.errors import ModelError

FieldType = Literal[
    "id",
    "string",
    "textarea",
    "picklist",
    "reference",
    "boolean",
    "currency",
    "double",
    "percent",
    "int",
    "date",
    "datetime",
    "email",
    "phone",
    "url",
]

# Flags in the field lines: r required on create, c computed (never createable or updateable),
# u createable but not updateable, x external id (usable in upsert paths), q unique.
_FLAGS: Final = frozenset("rcuxq")


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: FieldType
    label: str
    required: bool = False  # nillable false, createable, no default: REQUIRED_FIELD_MISSING
    createable: bool = True
    updateable: bool = True
    external_id: bool = False
    unique: bool = False
    picklist: str | None = None  # name of the value list in PICKLISTS
    reference_to: tuple[str, ...] = ()
    relationship: str | None = None  # `Account` for AccountId: the name SOQL walks through


@dataclass(frozen=True, slots=True)
class SObject:
    name: str
    label: str
    label_plural: str
    key_prefix: str
    fields: tuple[Field, ...]
    name_field: str = "Name"

    def field(self, name: str) -> Field:
        for spec in self.fields:
            if spec.name.lower() == name.lower():
                return spec
        raise ModelError(f"{self.name} has no field {name!r}", path=f"crm.{self.name}")

    def has(self, name: str) -> bool:
        return any(spec.name.lower() == name.lower() for spec in self.fields)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.fields)

    def relationship(self, name: str) -> Field | None:
        for spec in self.fields:
            if spec.relationship is not None and spec.relationship.lower() == name.lower():
                return spec
        return None


PICKLISTS: Final[Mapping[str, tuple[str, ...]]] = {
    "AccountType": (
        "Prospect",
        "Customer - Direct",
        "Customer - Channel",
        "Channel Partner / Reseller",
        "Installation Partner",
        "Technology Partner",
        "Other",
    ),
    "Industry": (
        "Agriculture",
        "Banking",
        "Biotechnology",
        "Communications",
        "Consulting",
        "Education",
        "Electronics",
        "Energy",
        "Finance",
        "Healthcare",
        "Insurance",
        "Manufacturing",
        "Media",
        "Retail",
        "Technology",
        "Transportation",
        "Other",
    ),
    "Rating": ("Hot", "Warm", "Cold"),
    "LeadSource": ("Web", "Phone Inquiry", "Partner Referral", "Purchased List", "Other"),
    "LeadStatus": (
        "Open - Not Contacted",
        "Working - Contacted",
        "Closed - Converted",
        "Closed - Not Converted",
    ),
    "StageName": (
        "Prospecting",
        "Qualification",
        "Needs Analysis",
        "Value Proposition",
        "Id. Decision Makers",
        "Perception Analysis",
        "Proposal/Price Quote",
        "Negotiation/Review",
        "Closed Won",
        "Closed Lost",
    ),
    "ForecastCategoryName": ("Omitted", "Pipeline", "Best Case", "Commit", "Closed"),
    "OpportunityType": (
        "Existing Customer - Upgrade",
        "Existing Customer - Replacement",
        "Existing Customer - Downgrade",
        "New Customer",
    ),
    "ProductFamily": ("Hardware", "Software", "Services"),
    "CaseStatus": ("New", "Working", "Escalated", "Closed"),
    "CasePriority": ("High", "Medium", "Low"),
    "CaseOrigin": ("Phone", "Email", "Web"),
    "CaseType": ("Question", "Problem", "Feature Request"),
    "CaseReason": (
        "Installation",
        "Equipment Complexity",
        "Performance",
        "Breakdown",
        "Equipment Design",
        "Feedback",
        "Other",
    ),
    "TaskStatus": (
        "Not Started",
        "In Progress",
        "Completed",
        "Waiting on someone else",
        "Deferred",
    ),
    "TaskPriority": ("High", "Normal", "Low"),
    "TimeZoneSidKey": ("America/Los_Angeles", "America/New_York", "Europe/London", "Europe/Paris"),
    "LocaleSidKey": ("en_US", "en_GB", "fr_FR", "de_DE"),
    "EmailEncodingKey": ("UTF-8", "ISO-8859-1"),
    "LanguageLocaleKey": ("en_US", "fr", "de"),
}
"""Restricted picklists: a value outside the list is refused (INVALID_OR_NULL_FOR_RESTRICTED_
PICKLIST), as the standard value sets of these fields are."""

PICKLIST_DEFAULTS: Final[Mapping[tuple[str, str], str]] = {
    ("Lead", "Status"): "Open - Not Contacted",
    ("Case", "Status"): "New",
    ("Case", "Priority"): "Medium",
    ("Task", "Status"): "Not Started",
    ("Task", "Priority"): "Normal",
}
"""The default value of a picklist when a create leaves it out (the value set's default)."""

# Every object carries these, after its own fields.
_SYSTEM: Final = """
IsDeleted boolean c Deleted
CreatedDate datetime c Created Date
CreatedById reference c -> User.CreatedBy Created By ID
LastModifiedDate datetime c Last Modified Date
LastModifiedById reference c -> User.LastModifiedBy Last Modified By ID
SystemModstamp datetime c System Modstamp
"""

_OWNER: Final = "OwnerId reference -> User.Owner Owner ID"

_SPECS: Final[tuple[tuple[str, str, str, str, str], ...]] = (
    (
        "User",
        "User",
        "Users",
        "005",
        """
Username string rq Username
LastName string r Last Name
FirstName string First Name
Name string c Full Name
Alias string r Alias
Email email r Email
IsActive boolean Active
Title string Title
Department string Department
CompanyName string Company Name
TimeZoneSidKey picklist r Time Zone
LocaleSidKey picklist r Locale
EmailEncodingKey picklist r Email Encoding
LanguageLocaleKey picklist r Language
""",
    ),
    (
        "Account",
        "Account",
        "Accounts",
        "001",
        f"""
Name string r Account Name
Type picklist:AccountType Account Type
Industry picklist Industry
Rating picklist Account Rating
ParentId reference -> Account.Parent Parent Account ID
AccountNumber string Account Number
Phone phone Account Phone
Website url Website
BillingCity string Billing City
BillingCountry string Billing Country
AnnualRevenue currency Annual Revenue
NumberOfEmployees int Employees
External_Id__c string xq External ID
{_OWNER}
""",
    ),
    (
        "Contact",
        "Contact",
        "Contacts",
        "003",
        f"""
AccountId reference -> Account.Account Account ID
LastName string r Last Name
FirstName string First Name
Name string c Full Name
Title string Title
Email email Email
Phone phone Business Phone
LeadSource picklist Lead Source
MailingCity string Mailing City
{_OWNER}
""",
    ),
    (
        "Lead",
        "Lead",
        "Leads",
        "00Q",
        f"""
LastName string r Last Name
FirstName string First Name
Name string c Full Name
Company string r Company
Title string Title
Email email Email
Phone phone Phone
Status picklist:LeadStatus Status
LeadSource picklist Lead Source
Industry picklist Industry
Rating picklist Rating
IsConverted boolean c Converted
ConvertedDate date c Converted Date
ConvertedAccountId reference c -> Account.ConvertedAccount Converted Account ID
ConvertedContactId reference c -> Contact.ConvertedContact Converted Contact ID
ConvertedOpportunityId reference c -> Opportunity.ConvertedOpportunity Converted Opportunity ID
{_OWNER}
""",
    ),
    (
        "Opportunity",
        "Opportunity",
        "Opportunities",
        "006",
        f"""
Name string r Name
AccountId reference -> Account.Account Account ID
StageName picklist r Stage
CloseDate date r Close Date
Amount currency Amount
Probability percent Probability (%)
ForecastCategoryName picklist Forecast Category
IsClosed boolean c Closed
IsWon boolean c Won
Type picklist:OpportunityType Opportunity Type
LeadSource picklist Lead Source
NextStep string Next Step
{_OWNER}
""",
    ),
    (
        "Product2",
        "Product",
        "Products",
        "01t",
        """
Name string r Product Name
ProductCode string Product Code
Description textarea Product Description
Family picklist:ProductFamily Product Family
IsActive boolean Active
""",
    ),
    (
        "OpportunityLineItem",
        "Opportunity Product",
        "Opportunity Product",
        "00k",
        """
OpportunityId reference ru -> Opportunity.Opportunity Opportunity ID
Product2Id reference ru -> Product2.Product2 Product ID
Name string c Opportunity Product Name
Quantity double r Quantity
UnitPrice currency r Sales Price
TotalPrice currency c Total Price
ServiceDate date Date
Description string Line Description
""",
    ),
    (
        "Case",
        "Case",
        "Cases",
        "500",
        f"""
CaseNumber string c Case Number
Subject string Subject
Description textarea Description
Status picklist:CaseStatus Status
Priority picklist:CasePriority Priority
Origin picklist:CaseOrigin Case Origin
Type picklist:CaseType Case Type
Reason picklist:CaseReason Case Reason
AccountId reference -> Account.Account Account ID
ContactId reference -> Contact.Contact Contact ID
IsEscalated boolean Escalated
IsClosed boolean c Closed
ClosedDate datetime c Closed Date
{_OWNER}
""",
    ),
    (
        "Task",
        "Task",
        "Tasks",
        "00T",
        f"""
Subject string Subject
Status picklist:TaskStatus Status
Priority picklist:TaskPriority Priority
ActivityDate date Due Date Only
WhoId reference -> Contact|Lead.Who Name ID
WhatId reference -> Account|Opportunity|Case.What Related To ID
Description textarea Description
IsClosed boolean c Closed
{_OWNER}
""",
    ),
)


def _parse_field(line: str, where: str) -> Field:
    words = line.split()
    if len(words) < 3:
        raise ModelError(f"field line {line!r} needs a name, a type and a label", path=where)
    name, kind = words[0], words[1]
    picklist: str | None = None
    if kind.startswith("picklist"):
        kind, _, listed = kind.partition(":")
        picklist = listed or name
    rest = words[2:]
    flags = ""
    if rest and set(rest[0]) <= _FLAGS:
        flags, rest = rest[0], rest[1:]
    reference_to: tuple[str, ...] = ()
    relationship: str | None = None
    if rest and rest[0] == "->":
        target, _, relationship = rest[1].partition(".")
        reference_to = tuple(target.split("|"))
        rest = rest[2:]
    computed = "c" in flags
    return Field(
        name=name,
        type=kind,  # type: ignore[arg-type]  # checked against FieldType by a test
        label=" ".join(rest),
        required="r" in flags,
        createable=not computed,
        updateable=not computed and "u" not in flags,
        external_id="x" in flags,
        unique="q" in flags,
        picklist=picklist,
        reference_to=reference_to,
        relationship=relationship,
    )


def _build(name: str, label: str, plural: str, prefix: str, body: str) -> SObject:
    where = f"crm.{name}"
    own = [_parse_field(line, where) for line in body.strip().splitlines()]
    system = [_parse_field(line, where) for line in _SYSTEM.strip().splitlines()]
    id_field = Field("Id", "id", f"{label} ID", createable=False, updateable=False)
    # A record's name for polymorphic lookups (`What.Name`) and recent items.
    name_field = {"Case": "CaseNumber", "Task": "Subject"}.get(name, "Name")
    return SObject(name, label, plural, prefix, (id_field, *own, *system), name_field)


OBJECTS: Final[Mapping[str, SObject]] = {spec[0]: _build(*spec) for spec in _SPECS}
"""Every shipped object, by API name."""

BY_PREFIX: Final[Mapping[str, str]] = {obj.key_prefix: name for name, obj in OBJECTS.items()}


def sobject(name: str) -> SObject | None:
    """The object of that API name, whatever its case (`account` is `Account`), or None."""
    for key, obj in OBJECTS.items():
        if key.lower() == name.lower():
            return obj
    return None
