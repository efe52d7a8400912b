"""The items of a YAML cassette's main sequence, built one at a time from parser events.

`yaml.load` builds the whole document before returning, so a 1 GB cassette would need several
GB. Here libyaml's event parser (PyYAML's `CSafeLoader`) reads the file in chunks and each item of
the top-level mapping's sequence (`interactions`, `http_interactions`) is built from its events,
yielded and released: memory follows the largest item, plus whatever anchors the file defines
(an alias may name any earlier anchor, so anchored values are kept to the end of the document).

Scalars are resolved and constructed as `yaml.safe_load` does (ints, floats, booleans, null,
timestamps, `!!binary`), with Ruby's `!binary` tag (what Psych writes for binary strings) read as
`!!binary`. Any other tag is refused: nothing in a cassette needs one, and no Python object is
ever built from a file. Aliases are shared, not copied, so a "billion laughs" file costs what it
weighs; the readers accept only text where they read values.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from myna.traces.source import Source

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER: Any = yaml.resolver.Resolver()  # typeshed leaves its methods untyped
_NO_KEY = object()
_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The safe loader, plus Ruby's `!binary` tag."""


_Loader.add_constructor("!binary", SafeConstructor.construct_yaml_binary)


class _Invalid(Exception):
    """A well-formed YAML value that a cassette cannot hold (an unknown tag, a list as a key)."""

    def __init__(self, message: str, event: Event) -> None:
        super().__init__(message)
        self.line = event.start_mark.line + 1 if event.start_mark else None


def sequence_items(source: Source, keys: tuple[str, ...]) -> Iterator[tuple[str, int, Any]]:
    """`(key, index, item)` for each item of the first top-level member named in `keys`."""
    loader = _Loader(source.file)
    anchors: dict[str, Any] = {}
    index: int | None = None
    try:
        found = _enter_sequence(loader, keys, anchors, source)
        index = 0
        while not loader.check_event(SequenceEndEvent):
            yield found, index, _build(loader, loader.get_event(), anchors)
            index += 1
        _finish(loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else None
        raise source.error(f"invalid YAML: {error.problem}", line=line, entry=index) from None
    except yaml.YAMLError as error:
        raise source.error(f"invalid YAML: {error}", entry=index) from None
    except _Invalid as error:
        raise source.error(str(error), line=error.line, entry=index) from None
    finally:
        loader.dispose()


def _enter_sequence(
    loader: _Loader, keys: tuple[str, ...], anchors: dict[str, Any], source: Source
) -> str:
    """Move the parser to the first item of the wanted sequence; its key."""
    expected = " or ".join(f"`{key}`" for key in keys)
    loader.get_event()  # StreamStart
    if not loader.check_event(DocumentStartEvent):
        raise source.error(f"the file is empty; expected a mapping with {expected}")
    loader.get_event()
    if not loader.check_event(MappingStartEvent):
        raise source.error(f"expected a mapping with {expected} at the top level", field="")
    loader.get_event()
    while not loader.check_event(MappingEndEvent):
        key = _build(loader, loader.get_event(), anchors)
        if key in keys:
            if not loader.check_event(SequenceStartEvent):
                raise source.error("expected a list", field=str(key))
            loader.get_event()
            return str(key)
        _build(loader, loader.get_event(), anchors)  # a small member (`version`): read and dropped
    raise source.error(f"no {expected} list", field=keys[0])


def _finish(loader: _Loader) -> None:
    """Read the rest of the file, so that a syntax error after the items is still reported."""
    while not loader.check_event(StreamEndEvent):
        loader.get_event()


def _build(loader: _Loader, event: Any, anchors: dict[str, Any]) -> Any:
    """The value that starts with `event`, built from the events that follow it.

    Iterative (a deeply nested file must not exhaust the stack); `anchors` maps each anchor seen
    so far to its value. Events are told apart by exact type: this loop runs once per event.
    """
    next_event = loader.get_event
    stack: list[list[Any]] = []  # [container, the key waiting for its value (or _NO_KEY)]
    while True:
        kind = type(event)
        if kind is ScalarEvent:
            value: Any = _scalar(loader, event)
            if event.anchor:
                anchors[event.anchor] = value
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            container: Any = {} if kind is MappingStartEvent else []
            if event.anchor:
                anchors[event.anchor] = container
            stack.append([container, _NO_KEY])
            event = next_event()
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = stack.pop()[0]
        elif kind is AliasEvent:
            value = anchors.get(event.anchor, _NO_KEY)
            if value is _NO_KEY:
                raise _Invalid(f"alias *{event.anchor} names no anchor before it", event)
        else:
            raise _Invalid(f"unexpected {kind.__name__}", event)
        if not stack:
            return value
        frame = stack[-1]
        if type(frame[0]) is list:
            frame[0].append(value)
        elif frame[1] is _NO_KEY:
            if type(value) is dict or type(value) is list:
                raise _Invalid("a mapping key must be a scalar", event)
            frame[1] = value
        else:
            frame[0][frame[1]] = value
            frame[1] = _NO_KEY
        event = next_event()


@lru_cache(maxsize=4096)
def _plain_tag(value: str) -> str:
    """The tag YAML's rules give a plain scalar (`200` an int, `GET` a string); cached, since
    cassettes repeat the same keys and words in every interaction."""
    return str(_RESOLVER.resolve(ScalarNode, value, (True, False)))


def _scalar(loader: _Loader, event: ScalarEvent) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        if not event.implicit[0]:
            return event.value  # quoted or block text: a string, whatever it looks like
        tag = _plain_tag(event.value)
    if tag == _STR:
        return event.value
    if tag == _MERGE:
        return event.value  # `<<` read as the plain key it is written as
    construct = loader.yaml_constructors.get(tag)
    if construct is None:
        raise _Invalid(f"unsupported YAML tag {tag}", event)
    node = ScalarNode(tag, event.value, style=event.style)
    try:
        return construct(loader, node)
    except yaml.constructor.ConstructorError as error:
        raise _Invalid(f"bad {tag} value: {error.problem}", event) from None
    except ValueError as error:  # a timestamp that matches the pattern but is no date
        raise _Invalid(f"bad {tag} value {event.value!r}: {error}", event) from None
