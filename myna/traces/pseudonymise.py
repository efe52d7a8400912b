"""Consistent pseudonymisation of personal data, keyed by a secret the user passes.

E-mail addresses and phone numbers are found anywhere in text; person names are recognised by the
JSON key that holds them (`first_name`, `displayName`, `caller`, and `name` inside an object that
looks like a person). Each real value maps to a fake one through HMAC-SHA256(key, kind + value),
which seeds Faker: the same input gives the same plausible output across a whole corpus and across
runs, so references still line up, and nobody without the key can link the two.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from functools import lru_cache
from typing import Any, Literal

from myna.traces.model import Exchange, Message, Pairs, ToolCall

PersonField = Literal["first", "last", "full", "user"]

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
# Grouped digits (`+1 (555) 010-2030`, `555.010.2030`); the look-arounds keep dates, versions and
# IP addresses (`2024-01-09`, `1.19.3.1`, `10.0.0.12`) from matching.
_PHONE = re.compile(
    r"(?<![\w.:/-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\d{2,4}[\s.-])\d{3,4}[\s.-]\d{3,4}"
    r"(?![\w]|[.:/-]\d)"
)
_NAME_CHARS = re.compile(r"^[^\W\d_][^\W\d_ .,'-]*(?:[ .,'-]+[^\W\d_]+)*\.?$")

_PERSON_FIELDS: dict[str, PersonField] = {
    "firstname": "first",
    "givenname": "first",
    "middlename": "first",
    "lastname": "last",
    "familyname": "last",
    "surname": "last",
    "fullname": "full",
    "displayname": "full",
    "caller": "full",
    "callerid": "full",
    "callername": "full",
    "username": "user",
    "login": "user",
}
_PHONE_FIELDS = frozenset({"phone", "mobilephone", "homephone", "mobile", "telephone", "fax"})
# A bare `name` is a person's name only beside one of these keys; elsewhere it names an issue type,
# a table or a group, which later stages need intact.
_PERSON_SIGNALS = frozenset(
    {"email", "emailaddress", "firstname", "lastname", "username", "accountid", "userid"}
)


@lru_cache(maxsize=4096)
def _normal(key: str) -> str:
    return "".join(char for char in key.lower() if char.isalnum())


class Pseudonymiser:
    """Replaces personal data by consistent fakes derived from `key`."""

    def __init__(self, key: str) -> None:
        if not key:
            raise ValueError("the pseudonymisation key must not be empty")
        from faker import Faker  # a heavy import, paid only when pseudonymising

        self._key = key.encode()
        self._faker = Faker("en_US")
        self._cache: dict[tuple[str, str], str] = {}

    def email(self, address: str) -> str:
        return self._fake("email", address.lower())

    def phone(self, number: str) -> str:
        return self._fake("phone", "".join(char for char in number if char.isdigit()))

    def person(self, part: PersonField, name: str) -> str:
        return self._fake(part, name.strip().casefold())

    def text(self, text: str) -> str:
        """Replace every e-mail address and phone number inside free text."""
        if "@" in text:
            text = _EMAIL.sub(lambda found: self.email(found.group(0)), text)
        if any(char.isdigit() for char in text):
            text = _PHONE.sub(lambda found: self.phone(found.group(0)), text)
        return text

    def json(self, value: Any) -> Any:
        """A copy of a JSON value with personal data replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            is_person = any(_normal(key) in _PERSON_SIGNALS for key in value)
            return {key: self._field(key, item, is_person) for key, item in value.items()}
        return value

    def _field(self, key: str, item: Any, is_person: bool) -> Any:
        if not isinstance(item, str):
            return self.json(item)
        normal = _normal(key)
        part = _PERSON_FIELDS.get(normal) or ("full" if is_person and normal == "name" else None)
        if part and (part == "user" or _NAME_CHARS.match(item)):
            return self.person(part, item)
        if normal in _PHONE_FIELDS and any(char.isdigit() for char in item):
            return self.phone(item)
        return self.text(item)

    def pairs(self, pairs: Pairs) -> Pairs:
        return [(name, self.text(value)) for name, value in pairs]

    def exchange(self, exchange: Exchange) -> None:
        """Pseudonymise an exchange in place (URL, query, headers, bodies)."""
        exchange.url = self.text(exchange.url)
        exchange.query = self.pairs(exchange.query)
        exchange.request_headers = self.pairs(exchange.request_headers)
        exchange.response_headers = self.pairs(exchange.response_headers)
        for body in (exchange.request_body, exchange.response_body):
            if body.kind == "json":
                body.value = self.json(body.value)
            elif body.kind == "text":
                body.value = self.text(body.value)

    def tool_call(self, call: ToolCall) -> None:
        call.arguments = self.json(call.arguments)
        call.result = self.json(call.result)
        if call.error is not None:
            call.error = self.text(call.error)

    def message(self, message: Message) -> None:
        message.text = self.text(message.text)

    def _fake(self, kind: str, value: str) -> str:
        cached = self._cache.get((kind, value))
        if cached is not None:
            return cached
        digest = hmac.new(self._key, f"{kind}\0{value}".encode(), hashlib.sha256).digest()
        self._faker.seed_instance(int.from_bytes(digest[:8], "big"))
        fake = self._generate(kind, digest)
        self._cache[(kind, value)] = fake
        return fake

    def _generate(self, kind: str, digest: bytes) -> str:
        faker = self._faker
        if kind == "email":
            # The digest suffix keeps two people who draw the same fake name apart.
            local = f"{faker.first_name()}.{faker.last_name()}.{digest[8:10].hex()}".lower()
            return f"{local}@example.{('com', 'org', 'net')[digest[10] % 3]}"
        if kind == "phone":
            return str(faker.numerify("+1-###-555-####"))
        if kind == "first":
            return str(faker.first_name())
        if kind == "last":
            return str(faker.last_name())
        if kind == "user":
            return f"{faker.user_name()}{digest[8:10].hex()}"
        return f"{faker.first_name()} {faker.last_name()}"
