"""Pseudonymisation of the people in imported ticket data.

A keyed HMAC-SHA256 of a person's source identity seeds Faker, so the same person gets the same
fake name and e-mail everywhere in the dataset (and in any other dataset imported with the same
key), while nobody without the key can link a pseudonym back to the person, not even by hashing a
list of candidate names, which an unkeyed hash would allow.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from dataclasses import dataclass

from faker import Faker

__all__ = ["Persona", "Pseudonymiser"]

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_WORD = re.compile(r"\w+")
# What may separate the words of one name in prose: blanks, dots, hyphens ("abel.tuter").
_GAP = re.compile(r"[ \t._-]{1,3}")


@dataclass(frozen=True, slots=True)
class Persona:
    key: str
    """Hex HMAC of the identity: a stable, unlinkable key to derive record ids from."""
    first_name: str
    last_name: str
    user_name: str
    email: str

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}"


def _ascii_slug(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return _NOT_ALNUM.sub("", folded)


class Pseudonymiser:
    """Maps each person's source identity to a consistent fake persona.

    Identities compare case- and blank-insensitively ("Abel  Tuter" is "abel tuter"), because
    exports spell the same reference differently from column to column.
    """

    def __init__(self, key: str | bytes, *, domain: str = "example.com") -> None:
        if not key:
            raise ValueError("a pseudonymisation key must not be empty")
        self._key = key.encode() if isinstance(key, str) else key
        self._domain = domain
        self._faker = Faker("en_US")
        self._personas: dict[str, Persona] = {}
        # First word of each original identity -> (its words, pseudonym), longest first.
        self._by_first_word: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._known: set[tuple[str, ...]] = set()

    def persona(self, identity: str, *, also_known_as: str | None = None) -> Persona:
        """The persona of `identity`; `also_known_as` is a name the person goes by in free text
        when the identity itself is an id (a sys_id, a user name)."""
        normalised = " ".join(identity.split()).casefold()
        known = self._personas.get(normalised)
        if known is None:
            known = self._new(normalised)
            self._personas[normalised] = known
            self._remember(identity, known)
        if also_known_as is not None:
            self._remember(also_known_as, known)
        return known

    def _remember(self, original: str, persona: Persona) -> None:
        words = tuple(word.casefold() for word in _WORD.findall(original))
        # Very short identities ("al") would replace parts of ordinary prose.
        if not words or len(" ".join(words)) <= 2 or words in self._known:
            return
        self._known.add(words)
        entries = self._by_first_word.setdefault(words[0], [])
        entries.append((words, persona.name))
        entries.sort(key=lambda entry: len(entry[0]), reverse=True)

    def _new(self, normalised: str) -> Persona:
        digest = hmac.new(self._key, normalised.encode(), hashlib.sha256).digest()
        self._faker.seed_instance(int.from_bytes(digest[:8], "big"))
        first, last = self._faker.first_name(), self._faker.last_name()
        # Four digits from the digest keep user names unique among people whom Faker gives the
        # same name (ServiceNow requires unique user names).
        suffix = int.from_bytes(digest[8:12], "big") % 10000
        user_name = f"{_ascii_slug(first)}.{_ascii_slug(last)}{suffix:04d}"
        return Persona(
            key=digest.hex(),
            first_name=first,
            last_name=last,
            user_name=user_name,
            email=f"{user_name}@{self._domain}",
        )

    def scrub(self, text: str) -> str:
        """`text` with every original identity seen so far replaced by its pseudonym's name.

        Free text (descriptions, notes) often names the caller; only identities this
        pseudonymiser has already mapped can be recognised. Matching is word by word against an
        index of first words, so its cost does not grow with the number of people.
        """
        if not text or not self._by_first_word:
            return text
        words = list(_WORD.finditer(text))
        pieces: list[str] = []
        copied = position = 0
        while position < len(words):
            found = self._match(text, words, position)
            if found is None:
                position += 1
                continue
            length, pseudonym = found
            pieces += [text[copied : words[position].start()], pseudonym]
            copied = words[position + length - 1].end()
            position += length
        pieces.append(text[copied:])
        return "".join(pieces)

    def _match(
        self, text: str, words: list[re.Match[str]], position: int
    ) -> tuple[int, str] | None:
        """The longest identity starting at word `position`: its length in words and pseudonym."""
        for names, pseudonym in self._by_first_word.get(words[position][0].casefold(), ()):
            end = position + len(names)
            if end > len(words):
                continue
            if all(
                words[position + k][0].casefold() == names[k]
                and _GAP.fullmatch(
                    text[words[position + k - 1].end() : words[position + k].start()]
                )
                for k in range(1, len(names))
            ):
                return len(names), pseudonym
        return None
