"""Query languages the mock understands, each a pure parser into the filter AST in `query`.

`servicenow` reads `sysparm_query` encoded queries, `soql` reads Salesforce SOQL and `sosl` a small
SOSL. Every parser raises `QuerySyntaxError` and nothing else on bad input, so the HTTP layer can
answer in the service's own error shape (ServiceNow's 400, Salesforce's MALFORMED_QUERY).
"""

from __future__ import annotations

from myna.errors import MockError


class QuerySyntaxError(MockError):
    """A query text the mock cannot read: names the dialect, the offending term and its offset.

    `position` is a 0-based character offset into `query`; `line` and `column` are 1-based, the
    way Salesforce reports `ERROR at Row:1:Column:8`. `detail` is the message without context.
    """

    kind = "query_syntax"

    def __init__(
        self, detail: str, *, dialect: str, query: str, position: int, term: str | None = None
    ) -> None:
        self.detail = detail
        self.dialect = dialect
        self.query = query
        self.position = position
        self.term = term
        self.line = query.count("\n", 0, position) + 1
        self.column = position - (query.rfind("\n", 0, position) + 1) + 1
        super().__init__(detail, dialect=dialect, position=position, term=term)
