"""The built-in ERP-like (procure-to-pay) back end: corpus, reference service, rules, model.

Its corpus creates everything it uses, so it starts from an empty world as any user."""

from __future__ import annotations

from myna.mocks.backend import Backend

BACKEND = Backend(
    name="erp",
    title="ERP (procure to pay, REST JSON)",
    package=__name__,
    extension="erp",
)
