"""Who may do what in the reference org: licenses, profiles, the role hierarchy, public groups and
a queue, permission sets and who holds them.

An org comes with Salesforce's standard profiles (each owning the permission set that holds its
permissions) and the all-internal-users group; Acme's administrator then built the roles, groups
and permission sets below in Setup, before any API traffic the corpus records. `provision` makes
the first part, `share` the second once the people exist; both go through the org's own rules
(a new role brings its two sharing groups, a user's profile its permission set assignment), so
the access records agree with each other as a live org's do.

The standard profiles grant what those profiles grant in a new org (Setup > Profiles); the
administrator's profile, which the org made with its first user, grants every system
permission.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from myna.backends.crm.instance import ADMIN_PROFILE, EVERY, ORG_ID, Org

# Permissions (named after `Permissions`) of the standard profiles.
READ_ONLY: Final = (
    "ExportReport",
    "RunReports",
    "ViewSetup",
    "ChatterInternalUser",
    "ChatterInviteExternalUsers",
    "SendSitRequests",
    "ChatterOwnGroups",
    "EditOppLineItemUnitPrice",
    "EnableNotifications",
    "ApiEnabled",
    "FlowUFLRequired",
    "ActivitiesAccess",
    "EmailTemplateManagement",
    "EmailAdministration",
    "ChatterFileLink",
    "CreateCustomizeReports",
    "AllowUniversalSearch",
    "CreateCustomizeFilters",
    "EditTopics",
    "CreateTopics",
    "AssignTopics",
    "AllowViewKnowledge",
    "ContentWorkspaces",
    "ViewHelpLink",
    "LightningExperienceUser",
    "SubmitMacrosAllowed",
    "ChatterEditOwnPost",
    "SelectFilesFromSalesforce",
    "SubscribeToLightningReports",
    "ShowCompanyNameAsUserBadge",
    "UseWebLink",
    "LightningConsoleAllowedForUser",
    "ApexRestServices",
    "EnableCommunityAppLauncher",
    "ViewRoles",
)
STANDARD_USER: Final = (
    *READ_ONLY,
    "EmailSingle",
    "EmailMass",
    "EditTask",
    "EditEvent",
    "ImportPersonal",
    "MassInlineEdit",
    "ConvertLeads",
    "DistributeFromPersWksp",
    "RemoveDirectMessageMembers",
    "AddDirectMessageMembers",
    "ListEmailSend",
    "TransactionalEmailSend",
    "CanAccessCE",
)
MINIMUM_ACCESS: Final = (
    "ChatterInternalUser",
    "FlowUFLRequired",
    "ActivitiesAccess",
    "EmailTemplateManagement",
    "EmailAdministration",
    "AllowViewKnowledge",
    "ViewHelpLink",
    "LightningConsoleAllowedForUser",
)
CHATTER_FREE: Final = (
    "ChatterInternalUser",
    "ChatterInviteExternalUsers",
    "PasswordNeverExpires",
    "ChatterOwnGroups",
    "DistributeFromPersWksp",
    "ApiEnabled",
    "FlowUFLRequired",
    "ChatterFileLink",
    "EditTopics",
    "CreateTopics",
    "AssignTopics",
    "ViewHelpLink",
    "LightningExperienceUser",
    "SelectFilesFromSalesforce",
    "RemoveDirectMessageMembers",
    "AddDirectMessageMembers",
    "ShowCompanyNameAsUserBadge",
    "ApexRestServices",
    "EnableCommunityAppLauncher",
)
API_ONLY: Final = ("ChatterInternalUser", "ApiUserOnly", "ApiEnabled")

LICENSES: Final = ("Salesforce", "Salesforce Platform", "Chatter Free", "Salesforce Integration")

# (name, license, user type, permissions)
PROFILES: Final[tuple[tuple[str, str, str, tuple[str, ...]], ...]] = (
    (ADMIN_PROFILE, "Salesforce", "Standard", EVERY),
    ("Standard User", "Salesforce", "Standard", STANDARD_USER),
    ("Read Only", "Salesforce", "Standard", READ_ONLY),
    ("Marketing User", "Salesforce", "Standard", (*STANDARD_USER, "ImportLeads")),
    ("Contract Manager", "Salesforce", "Standard", (*STANDARD_USER, "ActivateContract")),
    ("Solution Manager", "Salesforce", "Standard", (*STANDARD_USER, "ManageSolutions")),
    ("Minimum Access - Salesforce", "Salesforce", "Standard", MINIMUM_ACCESS),
    ("Standard Platform User", "Salesforce Platform", "Standard", STANDARD_USER),
    ("Chatter Free User", "Chatter Free", "CsnOnly", CHATTER_FREE),
    ("Salesforce API Only System Integrations", "Salesforce Integration", "Standard", API_ONLY),
)

# (name, parent, opportunity access, case access) of Acme's role hierarchy.
ROLES: Final[tuple[tuple[str, str | None, str, str], ...]] = (
    ("CEO", None, "Edit", "Edit"),
    ("VP, Sales", "CEO", "Edit", "Edit"),
    ("Account Executive", "VP, Sales", "Edit", "Read"),
    ("Sales Development", "VP, Sales", "Read", "Read"),
    ("VP, Customer Support", "CEO", "Read", "Edit"),
    ("Support Engineer", "VP, Customer Support", "Read", "Edit"),
    ("Director, IT", "CEO", "Edit", "Edit"),
)

# (name, type, members: usernames and group names)
GROUPS: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("Sales Team", "Regular", ("maya.chen@acme.example", "leo.fischer@acme.example")),
    ("Support Team", "Regular", ("ines.alvarez@acme.example",)),
    ("Customer Facing", "Regular", ("Sales Team", "Support Team")),
    ("Support Queue", "Queue", ("ines.alvarez@acme.example",)),
)

# (API name, label, description, permissions, assignees)
PERMISSION_SETS: Final[tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...]] = (
    (
        "Sales_Operations",
        "Sales Operations",
        "Imports and reassigns leads, and manages the public sales reports.",
        ("ImportLeads", "ManageLeads", "TransferAnyLead", "ManageReportsInPubFolders"),
        ("admin@acme.example", "maya.chen@acme.example"),
    ),
    (
        "ERP_Sync",
        "ERP Sync",
        "Bulk loads for the nightly ERP account sync.",
        ("ApiEnabled", "BulkApiHardDelete", "ViewAllData"),
        ("integration@acme.example",),
    ),
    (
        "Case_Escalations",
        "Case Escalations",
        "Reassigns any case and edits case comments.",
        ("TransferAnyCase", "EditCaseComments", "ManageCases"),
        ("ines.alvarez@acme.example",),
    ),
)


@dataclass(slots=True)
class Access:
    """The access records' ids, by name."""

    licenses: dict[str, str] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    permission_sets: dict[str, str] = field(default_factory=dict)


def provision(org: Org) -> Access:
    """What the org has before its people: licenses, the standard profiles, the
    all-internal-users group and the roles. A standard profile the org already has (System
    Administrator, which it made with its first user) is that profile, with its license: an org
    has one profile of each standard name."""
    access = Access()
    existing = {name: org.find_profile(name) for name, *_ in PROFILES}
    held = {
        license_name: org.rows["Profile"][profile_id]["UserLicenseId"]
        for name, license_name, *_ in PROFILES
        if (profile_id := existing[name]) is not None
    }
    for name in LICENSES:
        # User licenses are not an object this org ships: only their ids appear.
        access.licenses[name] = held.get(name) or org.new_id("100")
    for name, license_name, user_type, granted in PROFILES:
        access.profiles[name] = existing[name] or org.add_profile(
            name, access.licenses[license_name], user_type, granted
        )
    org.add_record(
        "Group",
        {
            "DeveloperName": "AllInternalUsers",
            "Type": "Organization",
            "OwnerId": ORG_ID,
            "DoesIncludeBosses": True,
        },
    )
    for name, parent, opportunities, cases in ROLES:
        access.roles[name] = org.create(
            "UserRole",
            {
                "Name": name,
                "ParentRoleId": access.roles[parent] if parent else None,
                "OpportunityAccessForAccountOwner": opportunities,
                "CaseAccessForAccountOwner": cases,
            },
            org.admin_id,
        )
    return access


def share(org: Org, access: Access, users: Mapping[str, str]) -> None:
    """The administrator's public groups, queue and permission sets, and who is in them."""
    for name, kind, members in GROUPS:
        group_id = org.create("Group", {"Name": name, "Type": kind}, org.admin_id)
        access.groups[name] = group_id
        for member in members:
            org.create(
                "GroupMember",
                {"GroupId": group_id, "UserOrGroupId": users.get(member) or access.groups[member]},
                org.admin_id,
            )
    for name, label, description, granted, assignees in PERMISSION_SETS:
        permission_set = org.create(
            "PermissionSet",
            {
                "Name": name,
                "Label": label,
                "Description": description,
                "LicenseId": access.licenses["Salesforce"],
                **{f"Permissions{permission}": True for permission in granted},
            },
            org.admin_id,
        )
        access.permission_sets[name] = permission_set
        for username in assignees:
            org.create(
                "PermissionSetAssignment",
                {"PermissionSetId": permission_set, "AssigneeId": users[username]},
                org.admin_id,
            )
