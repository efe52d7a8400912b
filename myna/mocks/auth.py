"""Authenticate requests the way the service did (Basic, Bearer, API key, OAuth2), with
configured credentials, and keep the admin credential apart from every agent credential.

The admin token never authenticates a service call and no service credential reaches the admin
API: `Authenticator` refuses to be built when the two overlap.

Worlds are capabilities: a credential reaches the worlds it was given, and a request is answered
only once its credential reaches the world it names. Each world has its own credential
(`world_credentials`: Basic `world:key` or the key as a token), which the admin API hands out
when it creates or forks the world. The key is derived from the admin token and the world's key
generation (HMAC), which the store keeps: every process serving one database with one admin
token accepts it, and rotating it (`POST /_myna/admin/worlds/{id}/credentials`, or deleting
the world) retires the old key, and the access tokens issued for it, in all of them. The shared
credentials (`--credential`) reach the default world only, unless the mock's worlds are open
(`open_worlds`, as an embedding program that owns every world wants); an access token issued at
a token endpoint reaches what the credential it was issued for reached.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from myna.errors import MockError
from myna.schemas.model import Auth

ANONYMOUS = "anonymous"
DEFAULT_WORLD = "default"
WORLD_PRINCIPAL = "token"
"""Who a world's own credential authenticates as (as the shared tokens do)."""

_WORLD_KEY = "myw_"

Scope = str | None
"""The world a credential reaches: its own world, or None for a shared credential."""

Generations = Callable[[str], int]
"""generation(world): how often the world's credential was replaced (`Store.key_generation`)."""


def never_rotated(world: str) -> int:
    """The key generation of a mock whose worlds' credentials are never replaced."""
    return 0


@dataclass(frozen=True, slots=True)
class _Grant:
    """Whom an issued token authenticates, where, and the key generation of the world's
    credential it was issued for (a rotation retires it)."""

    user: str
    scope: Scope
    generation: int


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

    def __init__(
        self,
        auth: Auth,
        credentials: Credentials,
        *,
        admin_token: str,
        open_worlds: bool = True,
        generation: Generations = never_rotated,
    ) -> None:
        if admin_token in credentials.tokens or admin_token in credentials.users.values():
            raise MockError(
                "the admin token must differ from every service credential",
                field="--admin-token-file",
            )
        self.auth = auth
        self.credentials = credentials
        self.open_worlds = open_worlds
        self._world_secret = hashlib.sha256(b"myna-world-key:" + admin_token.encode()).digest()
        self._generation = generation
        self._issued: dict[str, _Grant] = {}
        self._refresh: dict[str, _Grant] = {}
        self._lock = threading.Lock()
        self._api_key_header = (auth.header or "x-api-key").lower()

    @property
    def scheme(self) -> str:
        return self.auth.scheme

    def principal(self, headers: Mapping[str, str], world: str = DEFAULT_WORLD) -> str | None:
        """Who is calling, if the request's credential reaches `world`; None means the service's
        401, or a 404 when the credential is good for another world (`recognised`)."""
        found = self._identify(headers)
        if found is None:
            return None
        principal, scope = found
        return principal if self.reaches(scope, world) else None

    def recognised(self, headers: Mapping[str, str]) -> bool:
        """Whether the request carries a credential the mock accepts for some world."""
        return self._identify(headers) is not None

    def unsigned(self, headers: Mapping[str, str]) -> bool:
        """Whether the request carries no credential at all (rather than a wrong one)."""
        return "authorization" not in headers and self._api_key_header not in headers

    def reaches(self, scope: Scope, world: str) -> bool:
        """Whether a credential of `scope` may act in `world`."""
        if scope is None:
            return world == DEFAULT_WORLD or self.open_worlds
        return scope == world

    def world_credentials(self, world: str) -> dict[str, str]:
        """The credential that reaches `world` and no other, until it is rotated: Basic
        `user:password`, or the key alone as a bearer token or API key."""
        key = self._world_key(world, self._generation(world))
        return {"user": world, "password": key, "token": key}

    def _world_key(self, world: str, generation: int) -> str:
        """`myw_<world, base64url>.<generation>.<HMAC of both>`: the key names its world, so a
        request is authenticated before the world it names is looked at."""
        named = base64.urlsafe_b64encode(world.encode()).decode("ascii").rstrip("=")
        return f"{_WORLD_KEY}{named}.{generation}.{self._mac(world, generation)}"

    def _mac(self, world: str, generation: int) -> str:
        signed = b"%s\x00%d" % (world.encode(), generation)
        digest = hmac.new(self._world_secret, signed, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:24]).decode("ascii")

    def _world_of_key(self, key: str) -> str | None:
        """The world a world key was made for, while its generation is the world's; None for
        anything else. The signature is checked first, so only keys this mock (or another
        process with its admin token) made cost a look at the store."""
        named, _, rest = key[len(_WORLD_KEY) :].partition(".")
        generation, _, mac = rest.partition(".")
        try:
            world = base64.urlsafe_b64decode(named + "=" * (-len(named) % 4)).decode("utf-8")
        except ValueError:
            return None
        if not (generation.isascii() and generation.isdigit() and len(generation) < 19):
            return None
        expected = self._mac(world, int(generation))
        if not hmac.compare_digest(mac.encode(), expected.encode()):
            return None
        return world if self._current(world, int(generation)) else None

    def _current(self, world: str, generation: int) -> bool:
        """Whether a credential of `world` made at `generation` has not been rotated since."""
        return self._generation(world) == generation

    def _identify(self, headers: Mapping[str, str]) -> tuple[str, Scope] | None:
        scheme = self.auth.scheme
        if scheme == "none":
            return ANONYMOUS, None
        if scheme == "apikey":
            key = headers.get(self._api_key_header)
            return None if key is None else self._key(key)
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
            return self._token(value)
        return None

    def _key(self, value: str) -> tuple[str, Scope] | None:
        """An API key as sent, or after a scheme word of the service's own (Okta's `SSWS`)."""
        found = self._token(value)
        if found is not None:
            return "api-key", found[1]
        word, space, rest = value.partition(" ")
        if not (space and word.isalpha()):
            return None
        found = self._token(rest.strip())
        return None if found is None else ("api-key", found[1])

    def _any_form(self, value: str | None) -> tuple[str, Scope] | None:
        """A credential whose scheme the traces did not show: Basic user:password, or a token
        bare or after any scheme word."""
        if value is None:
            return None
        word, space, rest = value.partition(" ")
        if space and word.lower() == "basic":
            return self._basic(rest.strip())
        return self._token(rest.strip() if space and word.isalpha() else value.strip())

    def _token(self, value: str) -> tuple[str, Scope] | None:
        """An issued access token, a world's key or a configured token."""
        issued = self._issued.get(value)
        if issued is not None:
            return self._still_good(issued)
        if value.startswith(_WORLD_KEY):
            world = self._world_of_key(value)
            return None if world is None else (WORLD_PRINCIPAL, world)
        known = any(
            hmac.compare_digest(value.encode(), token.encode()) for token in self.credentials.tokens
        )
        return ("token", None) if known else None

    def _basic(self, value: str) -> tuple[str, Scope] | None:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), not ASCII, or not UTF-8 once decoded
            return None
        user, colon, password = decoded.partition(":")
        return self._user(user, password) if colon else None

    def _user(self, user: str, password: str) -> tuple[str, Scope] | None:
        """A configured user, or a world's own user (named after the world, its key as the
        password)."""
        expected = self.credentials.users.get(user)
        if expected is not None:
            matches = hmac.compare_digest(expected.encode(), password.encode())
            return (user, None) if matches else None
        if password.startswith(_WORLD_KEY) and self._world_of_key(password) == user:
            return WORLD_PRINCIPAL, user
        return None

    def issue_token(
        self, form: Mapping[str, str], base_url: str, world: str = DEFAULT_WORLD
    ) -> dict[str, Any] | None:
        """The OAuth2 token endpoint of `world`: password or client-credentials grant of a
        credential that reaches it; None means 401. The token reaches what the credential did."""
        grant = form.get("grant_type", "")
        if grant == "password":
            user, password = form.get("username", ""), form.get("password", "")
        elif grant == "client_credentials":
            user, password = form.get("client_id", ""), form.get("client_secret", "")
        else:
            return None
        found = self._user(user, password)
        if found is None or not self.reaches(found[1], world):
            return None
        token = self.grant(found[0], found[1])
        return {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "instance_url": base_url,
            "scope": form.get("scope", ""),
        }

    def grant(self, user: str, scope: Scope = None) -> str:
        """A new access token that authenticates as `user` in the worlds of `scope`, until the
        credential of a world `scope` names is rotated."""
        return self._keep(self._issued, self._granted(user, scope))

    def issue_refresh_token(self, user: str, scope: Scope = None) -> str:
        """A refresh token that buys `user` new access tokens (OAuth2 refresh_token grant)."""
        return self._keep(self._refresh, self._granted(user, scope))

    def redeem_refresh_token(self, token: str, world: str = DEFAULT_WORLD) -> str | None:
        """A new access token for whom a refresh token was issued to, if it reaches `world`;
        None when this mock never issued it, it reaches other worlds, or its world's
        credential was rotated since."""
        grant = self._refresh.get(token)
        found = None if grant is None else self._still_good(grant)
        if found is None or not self.reaches(found[1], world):
            return None
        return self.grant(*found)

    def holder(self, access_token: str) -> tuple[str, Scope] | None:
        """Whom an access token this mock issued authenticates, and where."""
        grant = self._issued.get(access_token)
        return None if grant is None else self._still_good(grant)

    def _granted(self, user: str, scope: Scope) -> _Grant:
        return _Grant(user, scope, 0 if scope is None else self._generation(scope))

    def _keep(self, issued: dict[str, _Grant], grant: _Grant) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            issued[token] = grant
        return token

    def _still_good(self, grant: _Grant) -> tuple[str, Scope] | None:
        """Whom a grant authenticates, and where; None once its world's key was rotated."""
        if grant.scope is not None and not self._current(grant.scope, grant.generation):
            return None
        return grant.user, grant.scope

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


MIN_SECRET = 16
"""The shortest admin or episode-server token a command takes: each guards every world."""


def secret_token(path: Path | None, env_var: str, *, option: str) -> str:
    """A server's token: the text of the file at `path`, else the environment variable, else a
    random one. Never a command-line value (`ps` shows those); shorter than `MIN_SECRET`
    characters is refused."""
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or "not UTF-8 text"
            raise MockError(f"cannot read the token: {reason}", file=str(path)) from None
        where = str(path)
    else:
        token = os.environ.get(env_var, "").strip()
        where = env_var
        if not token:
            return secrets.token_urlsafe(24)
    if len(token) < MIN_SECRET:
        raise MockError(
            f"the token in {where} has {len(token)} characters; it needs at least {MIN_SECRET}",
            field=option,
        )
    return token


def admin_allowed(headers: Mapping[str, str], admin_token: str) -> bool:
    authorization = headers.get("authorization", "")
    kind, _, value = authorization.partition(" ")
    if kind.lower() == "bearer":
        return hmac.compare_digest(value.strip().encode(), admin_token.encode())
    header_token = headers.get("x-myna-admin-token")
    return header_token is not None and hmac.compare_digest(
        header_token.encode(), admin_token.encode()
    )
