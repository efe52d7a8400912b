"""Match a request path to an operation with a segment trie compiled once from the model.

Every request goes through here, so matching walks one trie node per path segment instead of
trying each operation's regular expression in turn. Literal segments win over `{param}` segments
(`/table/incident/count` beats `/table/incident/{sys_id}`), with backtracking when a literal
branch dead-ends. Parameter names belong to each template, not to the trie position, so
`/issue/{key}` and `/issue/{id}/transitions` can coexist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from urllib.parse import unquote

from myna.errors import ModelError

T = TypeVar("T")


@dataclass(slots=True)
class _Node(Generic[T]):
    literals: dict[str, _Node[T]] = field(default_factory=dict)
    param: _Node[T] | None = None
    # `{id}.json`: a parameter followed by a literal suffix in the same segment, by suffix.
    suffixed: dict[str, _Node[T]] = field(default_factory=dict)
    targets: dict[str, tuple[T, tuple[str, ...]]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Match(Generic[T]):
    target: T
    params: dict[str, str]


@dataclass(frozen=True, slots=True)
class MethodMismatch:
    """The path exists, but not for this method: the caller answers 405 with `allowed`."""

    allowed: tuple[str, ...]


def split_path(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


class Router(Generic[T]):
    """Maps (method, path template) to targets; `match` returns the target and path params."""

    def __init__(self) -> None:
        self._root: _Node[T] = _Node()

    def add(self, method: str, template: str, target: T) -> None:
        node = self._root
        names: list[str] = []
        for segment in split_path(template):
            suffixed = _SUFFIXED.fullmatch(segment)
            if segment.startswith("{") and segment.endswith("}"):
                names.append(segment[1:-1])
                if node.param is None:
                    node.param = _Node()
                node = node.param
            elif suffixed is not None:
                names.append(suffixed["name"])
                node = node.suffixed.setdefault(suffixed["suffix"], _Node())
            else:
                node = node.literals.setdefault(segment, _Node())
        verb = method.upper()
        if verb in node.targets:
            raise ModelError(f"two operations answer {verb} {template}", path=template)
        node.targets[verb] = (target, tuple(names))

    def match(self, method: str, path: str) -> Match[T] | MethodMismatch | None:
        segments = split_path(path)
        values: list[str] = []
        node = _walk(self._root, segments, 0, values)
        if node is None:
            return None
        found = node.targets.get(method.upper())
        if found is None:
            return MethodMismatch(tuple(sorted(node.targets)))
        target, names = found
        return Match(
            target, {name: unquote(value) for name, value in zip(names, values, strict=True)}
        )


def _walk(node: _Node[T], segments: list[str], index: int, values: list[str]) -> _Node[T] | None:
    if index == len(segments):
        return node if node.targets else None
    literal = node.literals.get(segments[index])
    if literal is not None:
        found = _walk(literal, segments, index + 1, values)
        if found is not None:
            return found
    segment = segments[index]
    for suffix, suffixed in node.suffixed.items():
        if len(segment) > len(suffix) and segment.endswith(suffix):
            values.append(segment[: -len(suffix)])
            found = _walk(suffixed, segments, index + 1, values)
            if found is not None:
                return found
            values.pop()
    if node.param is not None:
        values.append(segment)
        found = _walk(node.param, segments, index + 1, values)
        if found is not None:
            return found
        values.pop()
    return None


_SUFFIXED = re.compile(r"\{(?P<name>[^{}]+)\}(?P<suffix>\.[A-Za-z0-9]+)")
"""A parameter segment with a file-type suffix: `{ticketId}.json`."""
