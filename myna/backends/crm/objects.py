"""The Salesforce objects the CRM back end ships, as their describe results present them.

This catalogue is what the reference org (`myna.backends.crm.instance`) stores records by
and answers `describe` from: each field's API name, SOAP-style type, label, picklist values,
reference target and relationship name, and whether the API may set it on create or update.
Field lists follow the standard objects of a Developer Edition org (Sales and Service Cloud),
trimmed to the fields an integration touches; the access objects (UserRole, Profile, Group,
GroupMember, PermissionSet, PermissionSetAssignment) and User carry every field an API v50.0
org describes, because access-review integrations select them all (the JupiterOne recordings).
Key prefixes are Salesforce's own.

Fields are written one per line, `Name type [flags] [-> Target[|Target].[Relationship]] label`,
because a dataclass literal per field would bury the facts in punctuation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from myna.backends.crm.permissions import PERMISSIONS, PREFERENCES, permission_names
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
    "address",
]

# Flags in the field lines: r required on create, c computed (never createable or updateable),
# u createable but not updateable, p updateable but not createable, d defaulted on create (the
# platform fills it when a create leaves it out), n never null though no create must send it,
# x external id (usable in upsert paths), q unique. Checkboxes are never null.
_FLAGS: Final = frozenset("rcupdnxq")


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: FieldType
    label: str
    required: bool = False  # nillable false, createable, no default: REQUIRED_FIELD_MISSING
    createable: bool = True
    updateable: bool = True
    nillable: bool = True
    defaulted: bool = False
    external_id: bool = False
    unique: bool = False
    picklist: str | None = None  # name of the value list in PICKLISTS
    reference_to: tuple[str, ...] = ()
    relationship: str | None = None  # `Account` for AccountId: the name SOQL walks through


# An object's describe flags, as a standard Sales or Service Cloud object has them.
_STANDARD: Final[Mapping[str, bool]] = {
    "createable": True,
    "updateable": True,
    "deletable": True,
    "queryable": True,
    "searchable": True,
    "layoutable": True,
    "compactLayoutable": True,
    "searchLayoutable": True,
    "mruEnabled": True,
    "triggerable": True,
    "feedEnabled": True,
    "replicateable": True,
    "mergeable": False,
    "undeletable": True,
}
# Setup objects (roles, profiles, groups, permission sets) have no page layouts, feeds or
# triggers, and are deleted outright instead of into the recycle bin.
_SETUP: Final[Mapping[str, bool]] = {
    **_STANDARD,
    "layoutable": False,
    "compactLayoutable": False,
    "searchLayoutable": False,
    "mruEnabled": False,
    "triggerable": False,
    "feedEnabled": False,
    "undeletable": False,
}


@dataclass(frozen=True, slots=True)
class SObject:
    name: str
    label: str
    label_plural: str
    key_prefix: str
    fields: tuple[Field, ...]
    name_field: str | None = "Name"
    flags: Mapping[str, bool] = field(default_factory=lambda: dict(_STANDARD))
    _by_name: Mapping[str, Field] = field(init=False, repr=False, compare=False)
    _by_relationship: Mapping[str, Field] = field(init=False, repr=False, compare=False)
    names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Case-insensitive lookups by name: a describe or a query asks hundreds of times.
        object.__setattr__(self, "_by_name", {spec.name.lower(): spec for spec in self.fields})
        related = {spec.relationship.lower(): spec for spec in self.fields if spec.relationship}
        object.__setattr__(self, "_by_relationship", related)
        object.__setattr__(self, "names", tuple(spec.name for spec in self.fields))

    def field(self, name: str) -> Field:
        spec = self._by_name.get(name.lower())
        if spec is None:
            raise ModelError(f"{self.name} has no field {name!r}", path=f"crm.{self.name}")
        return spec

    def has(self, name: str) -> bool:
        return name.lower() in self._by_name

    @property
    def soft_deleted(self) -> bool:
        """Deleted records wait in the recycle bin (`IsDeleted`), as data objects' do; setup
        objects are deleted outright."""
        return self.has("IsDeleted")

    def relationship(self, name: str) -> Field | None:
        return self._by_relationship.get(name.lower())


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
    "EmailEncodingKey": (
        "UTF-8",
        "ISO-8859-1",
        "Shift_JIS",
        "ISO-2022-JP",
        "EUC-JP",
        "ks_c_5601-1987",
        "Big5",
        "GB2312",
        "Big5-HKSCS",
        "x-SJIS_0213",
    ),
    "LanguageLocaleKey": (
        "en_US",
        "de",
        "es",
        "fr",
        "it",
        "ja",
        "sv",
        "ko",
        "zh_TW",
        "zh_CN",
        "pt_BR",
        "nl_NL",
        "da",
        "th",
        "fi",
        "ru",
        "es_MX",
        "no",
    ),
    "GeocodeAccuracy": (
        "Address",
        "NearAddress",
        "Block",
        "Street",
        "ExtendedZip",
        "Zip",
        "Neighborhood",
        "City",
        "County",
        "State",
        "Unknown",
    ),
    "UserType": (
        "Standard",
        "PowerPartner",
        "PowerCustomerSuccess",
        "CustomerSuccess",
        "Guest",
        "CspLitePortal",
        "CsnOnly",
        "SelfService",
    ),
    "DigestFrequency": ("D", "W", "N"),
    "DefaultGroupNotificationFrequency": ("P", "D", "W", "N"),
    "AccessLevel": ("None", "Read", "Edit"),
    "PortalType": ("None", "CustomerPortal", "Partner"),
    "GroupType": (
        "AllCustomerPortal",
        "ChannelProgramGroup",
        "CollaborationGroup",
        "Manager",
        "ManagerAndSubordinatesInternal",
        "Organization",
        "Participant",
        "PRMOrganization",
        "Queue",
        "Regular",
        "Role",
        "RoleAndSubordinates",
        "RoleAndSubordinatesInternal",
        "SharingRecordCollGroup",
        "Territory",
        "TerritoryAndSubordinates",
    ),
    "PermissionSetType": ("Regular", "Profile", "Group", "Session", "Integration", "Standard"),
}
"""Restricted picklists: a value outside the list is refused (INVALID_OR_NULL_FOR_RESTRICTED_
PICKLIST), as the standard value sets of these fields are."""

PICKLIST_LABELS: Final[Mapping[str, Mapping[str, str | None]]] = {
    "EmailEncodingKey": {
        "UTF-8": "Unicode (UTF-8)",
        "ISO-8859-1": "General US & Western Europe (ISO-8859-1, ISO-LATIN-1)",
        "Shift_JIS": "Japanese (Shift-JIS)",
        "ISO-2022-JP": "Japanese (JIS)",
        "EUC-JP": "Japanese (EUC)",
        "ks_c_5601-1987": "Korean (ks_c_5601-1987)",
        "Big5": "Traditional Chinese (Big5)",
        "GB2312": "Simplified Chinese (GB2312)",
        "Big5-HKSCS": "Traditional Chinese Hong Kong (Big5-HKSCS)",
        "x-SJIS_0213": "Japanese (Shift-JIS_2004)",
    },
    "LanguageLocaleKey": {
        "en_US": "English",
        "de": "German",
        "es": "Spanish",
        "fr": "French",
        "it": "Italian",
        "ja": "Japanese",
        "sv": "Swedish",
        "ko": "Korean",
        "zh_TW": "Chinese (Traditional)",
        "zh_CN": "Chinese (Simplified)",
        "pt_BR": "Portuguese (Brazil)",
        "nl_NL": "Dutch",
        "da": "Danish",
        "th": "Thai",
        "fi": "Finnish",
        "ru": "Russian",
        "es_MX": "Spanish (Mexico)",
        "no": "Norwegian",
    },
    "UserType": {
        "PowerPartner": "Partner",
        "PowerCustomerSuccess": "Customer Portal Manager",
        "CustomerSuccess": "Customer Portal User",
        "CspLitePortal": "High Volume Portal",
        "CsnOnly": "CSN Only",
        "SelfService": "Self Service",
    },
    "DigestFrequency": {"D": "Daily", "W": "Weekly", "N": "Never"},
    "DefaultGroupNotificationFrequency": {
        "P": "Email on Each Post",
        "D": "Daily Digests",
        "W": "Weekly Digests",
        "N": "Never",
    },
    "AccessLevel": {"None": "Private", "Read": "Read Only", "Edit": "Read/Write"},
    "PortalType": {"CustomerPortal": "Customer Portal", "Partner": "Partner Portal"},
    # The group and permission set types describe without labels (null).
    "GroupType": dict.fromkeys(PICKLISTS["GroupType"]),
    "PermissionSetType": dict.fromkeys(PICKLISTS["PermissionSetType"]),
}
"""A picklist value's label where it is not the value itself."""

PICKLIST_DEFAULTS: Final[Mapping[tuple[str, str], str]] = {
    ("Lead", "Status"): "Open - Not Contacted",
    ("Case", "Status"): "New",
    ("Case", "Priority"): "Medium",
    ("Task", "Status"): "Not Started",
    ("Task", "Priority"): "Normal",
    ("User", "DigestFrequency"): "N",
    ("User", "DefaultGroupNotificationFrequency"): "N",
    ("PermissionSet", "Type"): "Regular",
}
"""The default value of a picklist when a create leaves it out (the value set's default)."""

# Opportunity stages (the standard sales process): default probability and forecast category.
STAGES: Final[Mapping[str, tuple[int, str]]] = {
    "Prospecting": (10, "Pipeline"),
    "Qualification": (10, "Pipeline"),
    "Needs Analysis": (20, "Pipeline"),
    "Value Proposition": (50, "Pipeline"),
    "Id. Decision Makers": (60, "Pipeline"),
    "Perception Analysis": (70, "Pipeline"),
    "Proposal/Price Quote": (75, "Pipeline"),
    "Negotiation/Review": (90, "Pipeline"),
    "Closed Won": (100, "Closed"),
    "Closed Lost": (0, "Omitted"),
}

_OPEN_CASE: Final[Mapping[str, Any]] = {"IsClosed": False, "ClosedDate": None}

ENTRY_VALUES: Final[Mapping[tuple[str, str], Mapping[str, Mapping[str, Any]]]] = {
    # A stage brings its probability and forecast category; the two Closed stages close the
    # opportunity, and only Closed Won wins it.
    ("Opportunity", "StageName"): {
        stage: {
            "Probability": float(probability),
            "ForecastCategoryName": category,
            "IsClosed": stage in ("Closed Won", "Closed Lost"),
            "IsWon": stage == "Closed Won",
        }
        for stage, (probability, category) in STAGES.items()
    },
    # Closed closes a case (its ClosedDate is the moment, which is no constant); any other status
    # reopens it, and Escalated flags it (the flag stays when the case moves on).
    ("Case", "Status"): {
        "New": _OPEN_CASE,
        "Working": _OPEN_CASE,
        "Escalated": {**_OPEN_CASE, "IsEscalated": True},
        "Closed": {"IsClosed": True},
    },
    ("Task", "Status"): {
        status: {"IsClosed": status == "Completed"} for status in PICKLISTS["TaskStatus"]
    },
}
"""The values entering a state sets: (object, status field) -> state -> field -> value, unless
the same request sets the field itself."""

REQUIRED_ON_ENTRY: Final[Mapping[tuple[str, str], Mapping[str, tuple[str, ...]]]] = {
    # The reference org's one validation rule: a case is closed only with a reason.
    ("Case", "Status"): {"Closed": ("Reason",)},
}
"""The fields a record must hold to enter a state: (object, status field) -> state -> fields."""

# Data objects carry these, after their own fields; setup objects and User list theirs in place.
_SYSTEM: Final = """
IsDeleted boolean cd Deleted
CreatedDate datetime cdn Created Date
CreatedById reference cdn -> User.CreatedBy Created By ID
LastModifiedDate datetime cdn Last Modified Date
LastModifiedById reference cdn -> User.LastModifiedBy Last Modified By ID
SystemModstamp datetime cdn System Modstamp
"""
_CREATED: Final = """
CreatedDate datetime cdn Created Date
CreatedById reference cdn -> User.CreatedBy Created By ID
"""
_MODIFIED: Final = """
LastModifiedDate datetime cdn Last Modified Date
LastModifiedById reference cdn -> User.LastModifiedBy Last Modified By ID
SystemModstamp datetime cdn System Modstamp
"""

_OWNER: Final = "OwnerId reference dn -> User.Owner Owner ID"


def _permissions(object_name: str, flags: str) -> str:
    """A Profile's or a PermissionSet's permission fields, one line each."""
    labels = (label for _, label in PERMISSIONS)
    return "".join(
        f"{name} boolean {flags} {label}\n"
        for name, label in zip(permission_names(object_name), labels, strict=True)
    )


_PREFERENCES: Final = "".join(f"UserPreferences{name} boolean - {name}\n" for name in PREFERENCES)

_SPECS: Final[tuple[tuple[str, str, str, str, str], ...]] = (
    (
        "User",
        "User",
        "Users",
        "005",
        f"""
Username string rq Username
LastName string r Last Name
FirstName string First Name
Name string cn Full Name
CompanyName string Company Name
Division string Division
Department string Department
Title string Title
Street textarea Street
City string City
State string State/Province
PostalCode string Zip/Postal Code
Country string Country
Latitude double Latitude
Longitude double Longitude
GeocodeAccuracy picklist Geocode Accuracy
Address address c Address
Email email r Email
EmailPreferencesAutoBcc boolean - AutoBcc
EmailPreferencesAutoBccStayInTouch boolean - AutoBccStayInTouch
EmailPreferencesStayInTouchReminder boolean - StayInTouchReminder
SenderEmail email Email Sender Address
SenderName string Email Sender Name
Signature textarea Email Signature
StayInTouchSubject string Stay-in-Touch Email Subject
StayInTouchSignature textarea Stay-in-Touch Email Signature
StayInTouchNote string Stay-in-Touch Email Note
Phone phone Phone
Fax phone Fax
MobilePhone phone Mobile
Alias string r Alias
CommunityNickname string dn Nickname
BadgeText string c User Photo badge text overlay
IsActive boolean d Active
TimeZoneSidKey picklist r Time Zone
UserRoleId reference -> UserRole.UserRole Role ID
LocaleSidKey picklist r Locale
ReceivesInfoEmails boolean d Info Emails
ReceivesAdminInfoEmails boolean d Admin Info Emails
EmailEncodingKey picklist r Email Encoding
ProfileId reference r -> Profile.Profile Profile ID
UserType picklist c User Type
LanguageLocaleKey picklist r Language
EmployeeNumber string Employee Number
DelegatedApproverId reference -> Group|User Delegated Approver ID
ManagerId reference -> User.Manager Manager ID
LastLoginDate datetime c Last Login
LastPasswordChangeDate datetime c Last Password Change or Reset
{_CREATED.strip()}
{_MODIFIED.strip()}
NumberOfFailedLogins int c Failed Login Attempts
OfflineTrialExpirationDate datetime c Offline Edition Trial Expiration Date
OfflinePdaTrialExpirationDate datetime c Sales Anywhere Trial Expiration Date
UserPermissionsMarketingUser boolean - Marketing User
UserPermissionsOfflineUser boolean - Offline User
UserPermissionsCallCenterAutoLogin boolean - Auto-login To Call Center
UserPermissionsSFContentUser boolean - Salesforce CRM Content User
UserPermissionsKnowledgeUser boolean - Knowledge User
UserPermissionsInteractionUser boolean - Flow User
UserPermissionsSupportUser boolean - Service Cloud User
UserPermissionsJigsawProspectingUser boolean - Data.com User
UserPermissionsSiteforceContributorUser boolean - Site.com Contributor User
UserPermissionsSiteforcePublisherUser boolean - Site.com Publisher User
UserPermissionsWorkDotComUserFeature boolean - WDC User
ForecastEnabled boolean d Allow Forecasting
{_PREFERENCES.strip()}
ContactId reference -> Contact.Contact Contact ID
AccountId reference c -> Account.Account Account ID
CallCenterId reference -> CallCenter Call Center ID
Extension phone Extension
FederationIdentifier string SAML Federation ID
AboutMe textarea About Me
FullPhotoUrl url c Url for full-sized Photo
SmallPhotoUrl url c Photo
IsExtIndicatorVisible boolean cd Show external indicator
OutOfOfficeMessage string c Out of office message
MediumPhotoUrl url c Url for medium profile photo
DigestFrequency picklist dn Chatter Email Highlights Frequency
DefaultGroupNotificationFrequency picklist dn Default Notification Frequency when Joining Groups
JigsawImportLimitOverride int Data.com Monthly Addition Limit
LastViewedDate datetime c Last Viewed Date
LastReferencedDate datetime c Last Referenced Date
BannerPhotoUrl url c Url for banner photo
SmallBannerPhotoUrl url c Url for IOS banner photo
MediumBannerPhotoUrl url c Url for Android banner photo
IsProfilePhotoActive boolean cd Has Profile Photo
IndividualId reference -> Individual.Individual Individual ID
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
Name string cn Full Name
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
Name string cn Full Name
Company string r Company
Title string Title
Email email Email
Phone phone Phone
Status picklist:LeadStatus dn Status
LeadSource picklist Lead Source
Industry picklist Industry
Rating picklist Rating
IsConverted boolean cd Converted
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
IsClosed boolean cd Closed
IsWon boolean cd Won
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
IsActive boolean d Active
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
CaseNumber string cdn Case Number
Subject string Subject
Description textarea Description
Status picklist:CaseStatus d Status
Priority picklist:CasePriority d Priority
Origin picklist:CaseOrigin Case Origin
Type picklist:CaseType Case Type
Reason picklist:CaseReason Case Reason
AccountId reference -> Account.Account Account ID
ContactId reference -> Contact.Contact Contact ID
IsEscalated boolean d Escalated
IsClosed boolean cd Closed
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
Status picklist:TaskStatus dn Status
Priority picklist:TaskPriority dn Priority
ActivityDate date Due Date Only
WhoId reference -> Contact|Lead.Who Name ID
WhatId reference -> Account|Opportunity|Case.What Related To ID
Description textarea Description
IsClosed boolean cd Closed
{_OWNER}
""",
    ),
    (
        "UserRole",
        "Role",
        "Role",
        "00E",
        f"""
Name string r Name
ParentRoleId reference -> UserRole Parent Role ID
RollupDescription string Description
OpportunityAccessForAccountOwner picklist:AccessLevel r Opportunity Access Level for Account Owner
CaseAccessForAccountOwner picklist:AccessLevel Case Access Level for Account Owner
ContactAccessForAccountOwner picklist:AccessLevel c Contact Access Level for Account Owner
ForecastUserId reference -> User User ID
MayForecastManagerShare boolean cd May Forecast Manager Share
{_MODIFIED.strip()}
DeveloperName string Developer Name
PortalAccountId reference u -> Account Account ID
PortalType picklist u Portal Type
PortalAccountOwnerId reference c -> User User ID
""",
    ),
    (
        "Profile",
        "Profile",
        "Profile",
        "00e",
        f"""
Name string pn Name
{_permissions("Profile", "p").strip()}
UserLicenseId reference cn -> UserLicense.UserLicense User License ID
UserType picklist c User Type
{_CREATED.strip()}
{_MODIFIED.strip()}
Description string p Description
LastViewedDate datetime c Last Viewed Date
LastReferencedDate datetime c Last Referenced Date
""",
    ),
    (
        "Group",
        "Group",
        "Group",
        "00G",
        f"""
Name string r Name
DeveloperName string Developer Name
RelatedId reference c -> User|UserRole.Related Related ID
Type picklist:GroupType ur Type
Email email Email
OwnerId reference cn -> Organization|User.Owner Owner ID
DoesSendEmailToMembers boolean d Send Email to Members
DoesIncludeBosses boolean d Include Bosses
{_CREATED.strip()}
{_MODIFIED.strip()}
""",
    ),
    (
        "GroupMember",
        "Group Member",
        "Group Member",
        "011",
        """
GroupId reference ur -> Group.Group Group ID
UserOrGroupId reference ur -> Group|User User/Group ID
SystemModstamp datetime cdn System Modstamp
""",
    ),
    (
        "PermissionSet",
        "Permission Set",
        "Permission Sets",
        "0PS",
        f"""
Name string r Permission Set Name
Label string r Permission Set Label
LicenseId reference u -> PermissionSetLicense|UserLicense.License License ID
ProfileId reference c -> Profile.Profile Profile ID
IsOwnedByProfile boolean cd Is Owned By Profile
IsCustom boolean cd Is Custom
{_permissions("PermissionSet", "-").strip()}
Description string Description
{_CREATED.strip()}
{_MODIFIED.strip()}
NamespacePrefix string c Namespace Prefix
HasActivationRequired boolean d Session Activation Required
PermissionSetGroupId reference c -> PermissionSetGroup.PermissionSetGroup PermissionSetGroup ID
Type picklist:PermissionSetType cd Permission Set Type
""",
    ),
    (
        "PermissionSetAssignment",
        "Permission Set Assignment",
        "Permission Set Assignments",
        "0Pa",
        """
PermissionSetId reference u -> PermissionSet.PermissionSet PermissionSet ID
PermissionSetGroupId reference u -> PermissionSetGroup.PermissionSetGroup PermissionSetGroup ID
AssigneeId reference ur -> User.Assignee Assignee ID
SystemModstamp datetime cdn Date Assigned
""",
    ),
)
"""(API name, label, plural label, key prefix, field lines) of every shipped object. User and the
setup objects list their audit fields in describe order; data objects get `_SYSTEM` appended."""

# Describe flags beyond a standard data object's.
_OBJECT_FLAGS: Final[Mapping[str, Mapping[str, bool]]] = {
    "User": {**_STANDARD, "deletable": False, "undeletable": False},
    "Account": {**_STANDARD, "mergeable": True},
    "Contact": {**_STANDARD, "mergeable": True},
    "Lead": {**_STANDARD, "mergeable": True},
    "Case": {**_STANDARD, "mergeable": True},
    "Task": {**_STANDARD, "feedEnabled": False},
    "OpportunityLineItem": {**_STANDARD, "searchable": False},
    "UserRole": {**_SETUP, "compactLayoutable": True},
    "Profile": {**_SETUP, "createable": False, "mruEnabled": True},
    "Group": _SETUP,
    "GroupMember": {**_SETUP, "updateable": False, "searchable": False},
    "PermissionSet": {**_SETUP, "mruEnabled": True, "replicateable": False},
    "PermissionSetAssignment": {
        **_SETUP,
        "updateable": False,
        "searchable": False,
        "replicateable": False,
    },
}

# The field a record is named by where it is not `Name` (None: the object has none).
_NAME_FIELDS: Final[Mapping[str, str | None]] = {
    "Case": "CaseNumber",
    "Task": "Subject",
    "GroupMember": None,
    "PermissionSetAssignment": None,
}

# Objects that list every field in place (no `_SYSTEM` appended).
_IN_PLACE: Final = frozenset(
    {
        "User",
        "UserRole",
        "Profile",
        "Group",
        "GroupMember",
        "PermissionSet",
        "PermissionSetAssignment",
    }
)

CHILD_RELATIONSHIPS: Final[Mapping[tuple[str, str], str | None]] = {
    ("User", "UserRoleId"): "Users",
    ("User", "ProfileId"): "Users",
    ("User", "ManagerId"): "ManagedUsers",
    ("User", "DelegatedApproverId"): "DelegatedUsers",
    ("GroupMember", "GroupId"): "GroupMembers",
    ("PermissionSetAssignment", "PermissionSetId"): "Assignments",
    ("PermissionSetAssignment", "AssigneeId"): "PermissionSetAssignments",
    ("Group", "RelatedId"): None,
    ("PermissionSet", "ProfileId"): None,
    ("OpportunityLineItem", "OpportunityId"): "OpportunityLineItems",
}
"""The name a parent's describe gives its children through a reference field, where it is not
the child's plural label (None: the relationship cannot be walked from the parent)."""


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
    if rest and (rest[0] == "-" or set(rest[0]) <= _FLAGS):
        flags, rest = rest[0].strip("-"), rest[1:]
    reference_to: tuple[str, ...] = ()
    relationship: str | None = None
    if rest and rest[0] == "->":
        target, _, named = rest[1].partition(".")
        reference_to = tuple(target.split("|"))
        relationship = named or None
        rest = rest[2:]
    computed = "c" in flags
    required = "r" in flags
    return Field(
        name=name,
        type=kind,  # type: ignore[arg-type]  # checked against FieldType by a test
        label=" ".join(rest),
        required=required,
        createable=not computed and "p" not in flags,
        updateable=not computed and "u" not in flags,
        nillable=not (required or "n" in flags or kind == "boolean"),
        defaulted="d" in flags,
        external_id="x" in flags,
        unique="q" in flags,
        picklist=picklist,
        reference_to=reference_to,
        relationship=relationship,
    )


def _build(name: str, label: str, plural: str, prefix: str, body: str) -> SObject:
    where = f"crm.{name}"
    own = [_parse_field(line, where) for line in body.strip().splitlines()]
    system = [] if name in _IN_PLACE else _SYSTEM.strip().splitlines()
    id_field = Field("Id", "id", f"{label} ID", createable=False, updateable=False, nillable=False)
    fields = (id_field, *own, *(_parse_field(line, where) for line in system))
    # A record's name for polymorphic lookups (`What.Name`) and recent items.
    name_field = _NAME_FIELDS.get(name, "Name")
    flags = _OBJECT_FLAGS.get(name, _STANDARD)
    return SObject(name, label, plural, prefix, fields, name_field, dict(flags))


OBJECTS: Final[Mapping[str, SObject]] = {spec[0]: _build(*spec) for spec in _SPECS}
"""Every shipped object, by API name."""

BY_PREFIX: Final[Mapping[str, str]] = {obj.key_prefix: name for name, obj in OBJECTS.items()}


def sobject(name: str) -> SObject | None:
    """The object of that API name, whatever its case (`account` is `Account`), or None."""
    for key, obj in OBJECTS.items():
        if key.lower() == name.lower():
            return obj
    return None


def catalogued(spec: Field) -> tuple[str, ...]:
    """The objects a reference may point at that this catalogue ships (a Group's owner may be the
    organization, which it does not)."""
    return tuple(name for name in spec.reference_to if name in OBJECTS)
