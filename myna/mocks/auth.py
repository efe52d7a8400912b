"""Authenticate requests the way the service did (Basic, Bearer, API key, OAuth2), with
configured credentials, and keep the admin credential apart from every agent credential.

The admin token never authenticates a service call and no service credential reaches the admin
API: `Authenticator` refuses to be built when the two overlap.
"""

from __future__ import annotations

import base64
import hmac
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from myna.errors import MockError
from myna.schemas.model import Auth

ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Credentials:
    """What the mock accepts: user/password pairs (Basic, OAuth2 password and client grants)
    and opaque tokens (Bearer tokens, API keys)."""

    users: Mapping[str, str] = field(default_factory=dict)
    tokens: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, specs: Iterable[str]) -> Credentials:
        """`USER:PASSWORD` adds a user; anything without a colon is a token or API key."""
        users: dict[str, str] = {}
        tokens: set[str] = set()
        for spec in specs:
            if not spec:
                raise MockError("an empty credential was given", field="--credential")
            user, colon, password = spec.partition(":")
            if colon:
                if not user:
                    raise MockError(f"credential {spec!r} has no user name", field="--credential")
                users[user] = password
            else:
                tokens.add(spec)
        return cls(users=users, tokens=frozenset(tokens))


DEFAULT_CREDENTIALS = Credentials(users={"myna": "myna"}, tokens=frozenset({"myna-token"}))


class Authenticator:
    """Answers "who is calling?" for the service API; None means the service's 401."""

    def __init__(self, auth: Auth, credentials: Credentials, *, admin_token: str) -> None:
        if admin_token in credentials.tokens or admin_token in credentials.users.values():
            raise MockError(
                "the admin token must differ from every service credential", field="--admin-token"
            )
        self.auth = auth
        self.credentials = credentials
        self._issued: dict[str, str] = {}
        self._refresh: dict[str, str] = {}
        self._lock = threading.Lock()
        self._api_key_header = (auth.header or "x-api-key").lower()

    @property
    def scheme(self) -> str:
        return self.auth.scheme

    def principal(self, headers: Mapping[str, str]) -> str | None:
        scheme = self.auth.scheme
        if scheme == "none":
            return ANONYMOUS
        if scheme == "apikey":
            key = headers.get(self._api_key_header)
            return "api-key" if key is not None and self._known_key(key) else None
        if scheme == "unknown":
            return self._any_form(headers.get((self.auth.header or "authorization").lower()))
        authorization = headers.get("authorization")
        if authorization is None:
            return None
        kind, _, value = authorization.partition(" ")
        kind = kind.lower()
        value = value.strip()
        if kind == "basic" and scheme in ("basic", "oauth2"):
            return self._basic(value)
        if kind in ("bearer", "oauth") and scheme in ("bearer", "oauth2", "basic"):
            # Basic services usually take a bearer token too (ServiceNow OAuth); tokens are
            # configured explicitly, so this widens nothing the operator did not allow.
            issued = self._issued.get(value)
            if issued is not None:
                return issued
            return "token" if self._known_token(value) else None
        return None

    def _known_key(self, value: str) -> bool:
        """An API key as sent, or after a scheme word of the service's own (Okta's `SSWS`)."""
        if self._known_token(value):
            return True
        word, space, rest = value.partition(" ")
        return bool(space) and word.isalpha() and self._known_token(rest.strip())

    def _any_form(self, value: str | None) -> str | None:
        """A credential whose scheme the traces did not show: Basic user:password, or a token
        bare or after any scheme word."""
        if value is None:
            return None
        word, space, rest = value.partition(" ")
        if space and word.lower() == "basic":
            return self._basic(rest.strip())
        token = rest.strip() if space and word.isalpha() else value.strip()
        issued = self._issued.get(token)
        if issued is not None:
            return issued
        return "token" if self._known_token(token) else None

    def _basic(self, value: str) -> str | None:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), not ASCII, or not UTF-8 once decoded
            return None
        user, colon, password = decoded.partition(":")
        expected = self.credentials.users.get(user)
        if not colon or expected is None:
            return None
        return user if hmac.compare_digest(expected.encode(), password.encode()) else None

    def _known_token(self, value: str) -> bool:
        return any(
            hmac.compare_digest(value.encode(), token.encode()) for token in self.credentials.tokens
        )

    def issue_token(self, form: Mapping[str, str], base_url: str) -> dict[str, Any] | None:
        """The OAuth2 token endpoint: password or client-credentials grant; None means 401."""
        grant = form.get("grant_type", "")
        if grant == "password":
            user, password = form.get("username", ""), form.get("password", "")
        elif grant == "client_credentials":
            user, password = form.get("client_id", ""), form.get("client_secret", "")
        else:
            return None
        expected = self.credentials.users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            return None
        token = self.grant(user)
        return {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "instance_url": base_url,
            "scope": form.get("scope", ""),
        }

    def grant(self, user: str) -> str:
        """A new access token that authenticates as `user`."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._issued[token] = user
        return token

    def issue_refresh_token(self, user: str) -> str:
        """A refresh token that buys `user` new access tokens (OAuth2 refresh_token grant)."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._refresh[token] = user
        return token

    def redeem_refresh_token(self, token: str) -> str | None:
        """The user a refresh token was issued to; None when this mock never issued it."""
        return self._refresh.get(token)

    def challenge_headers(self) -> list[tuple[str, str]]:
        if self.auth.unauthorized_headers:
            return list(self.auth.unauthorized_headers.items())
        if self.auth.scheme == "basic":
            return [("WWW-Authenticate", 'Basic realm="myna"')]
        if self.auth.scheme in ("bearer", "oauth2", "unknown"):
            return [("WWW-Authenticate", "Bearer")]
        return []


def credential_headers(auth: Auth, *, user: str, password: str, token: str) -> dict[str, str]:
    """The headers a client signs a request with under `auth`: Basic with `user:password`,
    the bearer `token`, or the token in the API-key header (also when the scheme is unknown)."""
    if auth.scheme == "basic":
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return {"Authorization": f"Basic {encoded}"}
    if auth.scheme in ("bearer", "oauth2"):
        return {"Authorization": f"Bearer {token}"}
    if auth.scheme == "apikey":
        return {auth.header or "X-API-Key": token}
    if auth.scheme == "unknown":
        header = auth.header or "Authorization"
        return {header: f"Bearer {token}" if header.lower() == "authorization" else token}
    return {}


def admin_allowed(headers: Mapping[str, str], admin_token: str) -> bool:
    authorization = headers.get("authorization", "")
    kind, _, value = authorization.partition(" ")
    if kind.lower() == "bearer":
        return hmac.compare_digest(value.strip().encode(), admin_token.encode())
    header_token = headers.get("x-myna-admin-token")
    return header_token is not None and hmac.compare_digest(
        header_token.encode(), admin_token.encode()
    )
