"""Services and path templates from concrete request paths.

A service is a site (registrable domain, or host:port for local servers) plus an API base
(`/api/now`, `/services/data/v50.0`, `/rest/api/3`); versions stay literal.

Templating works on a trie of the path segments after the base. At every node, each child value
is judged by a table of small rules, each looking at one kind of evidence and yielding a vote
with its reason: the value's class (integer, UUID, sys_id ...), whether the value turns up as an
id in some response (a cross-reference), how many distinct siblings there are and how often each
recurs, whether siblings answer with the same record shape, and whether the parent names a table
of resources (`/table/{name}`, `/sobjects/{name}`). Children voted variable merge into one
parameter node; the rest stay literal. Every judgement uses counts and sets, never arrival
order, so the templates do not depend on the order the exchanges came in.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from myna.schemas.values import ID_CLASSES, ValueClass, classify_segment

TABLE_CONTAINERS = frozenset({"table", "sobjects", "objects", "tables", "entities", "collections"})
"""Parents whose children name resource types, each with a schema of its own."""

_KNOWN_BASES: tuple[tuple[str, ...], ...] = (("api", "now"),)
_VERSION = re.compile(r"v[0-9]+(?:\.[0-9]+)*|[0-9]{1,2}(?:\.[0-9]+)?")


def split_path(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def api_base(segments: list[str]) -> int:
    """How many leading segments form the API base (0 when there is none)."""
    for known in _KNOWN_BASES:
        if tuple(segments[: len(known)]) == known:
            return len(known)
    for index, segment in enumerate(segments[:4]):
        # A bare number is a version only right after `api` (`/rest/api/3`), never an id.
        if _VERSION.fullmatch(segment) and (
            segment[0] == "v" or segments[index - 1 : index] == ["api"]
        ):
            return index + 1
    return 1 if segments[:1] == ["api"] and len(segments) > 1 else 0


def site_of(host: str) -> str:
    """The registrable part of a host: `dev1.service-now.com` -> `service-now.com`."""
    name, _, port = host.partition(":")
    labels = name.split(".")
    if len(labels) <= 2 or all(label.isdigit() for label in labels):
        return host
    return ".".join(labels[-2:]) + (f":{port}" if port else "")


def service_name(site: str, base: str, *, qualify: bool) -> str:
    """A readable service name: `service-now.com` -> `servicenow`, qualified by base if asked."""
    label = site.split(".")[0].replace("-", "").replace(":", "-")
    if not qualify or not base:
        return label
    return label + "-" + "-".join(split_path(base)).replace(".", "_")


# --- the trie -----------------------------------------------------------------------------


@dataclass(slots=True)
class Node:
    """Exchanges sharing a path prefix: counts, the values merged here, and response shapes."""

    hits: int = 0
    ends: list[int] = field(default_factory=list)
    children: dict[str, Node] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)
    shapes: set[int] = field(default_factory=set)
    param: str | None = None
    made: int = 0
    """Exchanges ending here that made a record whose id is not in their path (a POST)."""

    def absorb(self, other: Node) -> None:
        self.hits += other.hits
        self.made += other.made
        self.ends.extend(other.ends)
        self.shapes |= other.shapes
        for value, count in other.values.items():
            self.values[value] = self.values.get(value, 0) + count
        for key, child in other.children.items():
            mine = self.children.get(key)
            if mine is None:
                self.children[key] = child
            else:
                mine.absorb(child)


@dataclass(frozen=True, slots=True)
class Sibling:
    """What the rules see about one child value of a node."""

    value: str
    value_class: ValueClass
    hits: int
    shapes: frozenset[int]
    parent: str | None
    cross_referenced: bool
    makes_records: bool = False
    """Every exchange through this value ended at it and made a record with another id."""


@dataclass(frozen=True, slots=True)
class Vote:
    weight: int
    reason: str


@dataclass(frozen=True, slots=True)
class Siblings:
    """All children of one node, with the counts the rules need computed once per node
    (a node may have thousands of id children; no rule may look at every pair)."""

    members: tuple[Sibling, ...]
    total_hits: int
    shapes: Counter[int] = field(default_factory=Counter)
    """How many siblings answered with each record shape."""
    id_shapes: Counter[int] = field(default_factory=Counter)
    """How many id-like siblings (by class or cross-reference) answered with each shape."""
    id_word_looks: frozenset[str] = frozenset()
    """Looks of cross-referenced words (`BUG` -> `A`)."""
    literal_looks: Counter[str] = field(default_factory=Counter)
    """Looks of words that are neither ids by class nor cross-referenced."""

    @classmethod
    def of(cls, members: tuple[Sibling, ...]) -> Siblings:
        shapes: Counter[int] = Counter()
        id_shapes: Counter[int] = Counter()
        id_word_looks: set[str] = set()
        literal_looks: Counter[str] = Counter()
        for member in members:
            shapes.update(member.shapes)
            if member.value_class in ID_CLASSES or member.cross_referenced:
                id_shapes.update(member.shapes)
            if member.value_class == "word":
                if member.cross_referenced:
                    id_word_looks.add(_look(member.value))
                else:
                    literal_looks[_look(member.value)] += 1
        return cls(
            members,
            sum(member.hits for member in members),
            shapes,
            id_shapes,
            frozenset(id_word_looks),
            literal_looks,
        )


Rule = Callable[[Sibling, Siblings], Iterator[Vote]]


def rule_value_class(sibling: Sibling, _: Siblings) -> Iterator[Vote]:
    if sibling.value_class in ID_CLASSES:
        yield Vote(3, f"value class {sibling.value_class}")
    elif sibling.value_class == "version":
        yield Vote(-5, "a version")
    elif sibling.value_class == "word":
        yield Vote(-1, "a word")


def rule_cross_reference(sibling: Sibling, _: Siblings) -> Iterator[Vote]:
    if sibling.cross_referenced:
        # A word that is also some record's key (`BUG`, or a user called `user`) needs support.
        yield Vote(2 if sibling.value_class == "word" else 4, "appears as an id in a response")


def rule_table_container(sibling: Sibling, _: Siblings) -> Iterator[Vote]:
    if sibling.parent not in TABLE_CONTAINERS:
        return
    if sibling.value_class == "word":
        yield Vote(-6, f"names a resource type under /{sibling.parent}")
    elif sibling.value_class == "other" and sibling.value.isidentifier():
        # `Product2`, `u_asset2`: a name with digits; an id cross-referenced elsewhere still wins.
        yield Vote(-3, f"named like a resource type under /{sibling.parent}")


def rule_sibling_cardinality(sibling: Sibling, siblings: Siblings) -> Iterator[Vote]:
    distinct = len(siblings.members)
    if (
        sibling.value_class == "word"
        and distinct > 1
        and sibling.hits * distinct > siblings.total_hits
    ):
        # A word used more often than its share is a route (`/users/me`, `/users/search`).
        yield Vote(-1, "a frequent literal among its siblings")
    elif (
        distinct >= 5
        and sibling.hits * distinct <= siblings.total_hits * 2
        and sibling.value_class != "word"
    ):
        yield Vote(1, f"one of {distinct} rarely repeated siblings")


def rule_shared_shape(sibling: Sibling, siblings: Siblings) -> Iterator[Vote]:
    if not sibling.shapes:
        return
    is_id = sibling.value_class in ID_CLASSES or sibling.cross_referenced
    own = 1 if is_id else 0
    if any(siblings.id_shapes[shape] > own for shape in sibling.shapes):
        yield Vote(2, "answers with the same record shape as id-like siblings")
        return
    shared = any(siblings.shapes[shape] > 1 for shape in sibling.shapes)
    others = sum(siblings.shapes.values()) - len(sibling.shapes)
    if not shared and sibling.value_class == "word" and others > 0:
        yield Vote(-2, "answers with a record shape of its own")


def rule_makes_records(sibling: Sibling, _: Siblings) -> Iterator[Vote]:
    if sibling.makes_records and sibling.value_class == "word" and not sibling.cross_referenced:
        # POST /attachment/file answering a new attachment: `file` names no record, it is
        # where records are made, however much its answers look like its id siblings'.
        yield Vote(-3, "every call here made a record with another id")


def rule_resembles_ids(sibling: Sibling, siblings: Siblings) -> Iterator[Vote]:
    if sibling.cross_referenced or sibling.value_class != "word":
        return
    if _look(sibling.value) in siblings.id_word_looks:
        yield Vote(2, "written like a sibling that is a known id")


def rule_resembles_literals(sibling: Sibling, siblings: Siblings) -> Iterator[Vote]:
    if sibling.value_class != "word":
        return
    alike = siblings.literal_looks[_look(sibling.value)] - (0 if sibling.cross_referenced else 1)
    if alike >= 2:
        yield Vote(-1, "written like its literal siblings")


def _look(value: str) -> str:
    """The character classes of a value, runs collapsed: `BUG` and `SP` both look like `A`."""
    classes = [
        "A" if char.isupper() else "a" if char.islower() else "9" if char.isdigit() else char
        for char in value
    ]
    return "".join(
        kind for index, kind in enumerate(classes) if index == 0 or kind != classes[index - 1]
    )


RULES: tuple[Rule, ...] = (
    rule_value_class,
    rule_cross_reference,
    rule_table_container,
    rule_sibling_cardinality,
    rule_shared_shape,
    rule_makes_records,
    rule_resembles_ids,
    rule_resembles_literals,
)


def judge(sibling: Sibling, siblings: Siblings, rules: Iterable[Rule] = RULES) -> list[Vote]:
    """Every vote the rules cast on one child value."""
    return [vote for rule in rules for vote in rule(sibling, siblings)]


def is_variable(votes: list[Vote]) -> bool:
    return sum(vote.weight for vote in votes) > 0


# --- templating ---------------------------------------------------------------------------

PARAM = "{}"


@dataclass(slots=True)
class Templates:
    """The outcome: the template segments of every exchange, and the params' merged values."""

    of_exchange: dict[int, tuple[str, ...]]
    param_values: dict[tuple[str, ...], dict[str, int]]
    decisions: dict[tuple[str, ...], list[Vote]]


def build_trie(
    paths: list[list[str]], shapes: list[int | None], made: list[bool] | None = None
) -> Node:
    root = Node()
    for index, segments in enumerate(paths):
        node = root
        node.hits += 1
        for segment in segments:
            child = node.children.get(segment)
            if child is None:
                child = node.children[segment] = Node()
            child.hits += 1
            child.values[segment] = child.values.get(segment, 0) + 1
            node = child
        node.ends.append(index)
        if made is not None and made[index]:
            node.made += 1
        shape = shapes[index]
        if shape is not None:
            node.shapes.add(shape)
    return root


def template_paths(
    paths: list[list[str]],
    shapes: list[int | None],
    id_values: frozenset[str] | set[str],
    made: list[bool] | None = None,
) -> Templates:
    """Template every path; `shapes` is a record-shape signature per exchange (None: no body),
    `made` whether it made a record whose id is not in its path."""
    root = build_trie(paths, shapes, made)
    result = Templates(of_exchange={}, param_values={}, decisions={})
    _template_node(root, (), None, id_values, result)
    return result


def _template_node(
    node: Node,
    prefix: tuple[str, ...],
    parent: str | None,
    id_values: frozenset[str] | set[str],
    result: Templates,
) -> None:
    for index in node.ends:
        result.of_exchange[index] = prefix
    if not node.children:
        return
    members = tuple(
        Sibling(
            value=value,
            value_class=classify_segment(value),
            hits=child.hits,
            shapes=frozenset(child.shapes),
            parent=parent,
            cross_referenced=value in id_values,
            makes_records=0 < child.made == child.hits,
        )
        for value, child in sorted(node.children.items())
    )
    siblings = Siblings.of(members)
    variable: list[str] = []
    for member in members:
        votes = judge(member, siblings)
        result.decisions[(*prefix, member.value)] = votes
        if is_variable(votes):
            variable.append(member.value)
    if variable:
        merged = Node()
        for value in variable:
            merged.absorb(node.children.pop(value))
        node.children[PARAM] = merged
    for value, child in sorted(node.children.items()):
        if value == PARAM:
            path = (*prefix, PARAM)
            result.param_values[path] = child.values
            _template_node(child, path, parent, id_values, result)
        else:
            _template_node(child, (*prefix, value), value, id_values, result)


# --- naming -------------------------------------------------------------------------------


def singular(word: str) -> str:
    """`issues` -> `issue`, `categories` -> `category`; table names stay as they are."""
    if "_" in word or not word.islower() or len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_GENERIC_ID_FIELDS = {"id": "Id", "key": "Key", "uuid": "Uuid", "Id": "Id", "ID": "Id"}


def param_name(
    resource: str | None,
    values: Iterable[str],
    fields_of: dict[str, set[str]],
    service_id: str | None = None,
) -> str:
    """Name a parameter after what it holds: `sys_id`, `issueIdOrKey`, `projectKey`, `id`.

    `service_id` is the id field most of the service's records use; when no value names its
    field, a service-specific one (`sys_id`) is the best guess.
    """
    fields: set[str] = set()
    classes: set[ValueClass] = set()
    for value in values:
        fields |= fields_of.get(value, set())
        classes.add(classify_segment(value))
    specific = sorted(name for name in fields if name not in _GENERIC_ID_FIELDS)
    if specific and not (fields & _GENERIC_ID_FIELDS.keys()):
        return specific[0]
    kinds = sorted({_GENERIC_ID_FIELDS[name] for name in fields if name in _GENERIC_ID_FIELDS})
    if not fields and service_id is not None and service_id not in _GENERIC_ID_FIELDS:
        return service_id
    if not kinds:
        if classes <= {"integer"}:
            kinds = ["Id"]
        elif classes <= {"key"}:
            kinds = ["Key"]
        elif classes <= {"integer", "key"}:
            kinds = ["Id", "Key"]
        elif classes == {"date"}:
            return "date"
        else:
            kinds = ["Id"]
    if resource is None:
        return kinds[0].lower() if len(kinds) == 1 else "idOrKey"
    stem = _camel(singular(resource))
    return stem + "Or".join(kinds)


def _camel(name: str) -> str:
    head, *rest = re.split(r"[_\-.]", name) or [name]
    return head[:1].lower() + head[1:] + "".join(part[:1].upper() + part[1:] for part in rest)


def item_under(collection: str, param: str) -> str:
    """Where a collection keeps one record: `<collection>/{param}`, or for a collection named
    as a file (`/tickets.json`) the record named the same way (`/tickets/{param}.json`)."""
    while f"{{{param}}}" in collection:
        param += "_"  # a parent's parameter already has the name: two of one name break routing
    found = re.fullmatch(r"(?P<base>.*/[^/{}.]+)(?P<suffix>\.(?:json|xml))", collection)
    if found is None:
        return f"{collection.rstrip('/')}/{{{param}}}"
    return f"{found['base']}/{{{param}}}{found['suffix']}"
