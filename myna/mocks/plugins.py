"""Named plugins the mock finds without importing the layers above it.

Myna's built-in back ends sit above `myna.mocks` (they are written with it), yet a model file
naming the `servicenow` extension, or `myna serve itsm`, must find them from here. Each plugin
is therefore *declared* as a Python entry point (`pyproject.toml`, group `myna.extensions` or
`myna.backends`) and loaded by name when first asked for; another installed package adds its
own the same way. Code (tests, a user's script) may also `register` one directly.

A registry is a dict plus `register`, and duplicates raise.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from myna.errors import MockError

__all__ = ["PluginRegistry"]

T = TypeVar("T")


class PluginRegistry(Generic[T]):
    """Plugins of one kind by name: registered in code, or declared in entry-point `group`."""

    def __init__(self, what: str, group: str, kind: type[T]) -> None:
        self.what = what
        self.group = group
        self._kind = kind
        self._items: dict[str, T] = {}
        self._declared: dict[str, EntryPoint] | None = None

    def register(self, name: str, item: T) -> None:
        """Add a plugin; a second one under the same name is a mistake and raises."""
        if name in self._items:
            raise MockError(f"a {self.what} named {name!r} is already registered")
        self._items[name] = item

    def unregister(self, name: str) -> None:
        """Forget a plugin registered in code (a test's own); declared ones stay declared."""
        self._items.pop(name, None)

    def get(self, name: str) -> T | None:
        """The plugin called `name`, loading its declaration on first use; None if unknown."""
        found = self._items.get(name)
        if found is not None:
            return found
        declared = self._entry_points().get(name)
        if declared is None:
            return None
        loaded = declared.load()
        if not isinstance(loaded, self._kind):
            raise MockError(
                f"entry point {declared.value!r} (group {self.group}, name {name!r}) is not a "
                f"{self.what}: it is a {type(loaded).__name__}",
                plugin=name,
            )
        self._items[name] = loaded
        return loaded

    def require(self, name: str) -> T:
        """The plugin called `name`; a `MockError` listing the known ones if there is none."""
        found = self.get(name)
        if found is None:
            raise MockError(self.unknown(name), plugin=name)
        return found

    def unknown(self, name: str) -> str:
        """What to tell a user who asked for `name` when no such plugin exists."""
        known = ", ".join(self.names()) or "none"
        return (
            f"no {self.what} named {name!r}; there are: {known} (installed ones are declared as "
            f"entry points in group {self.group!r}: reinstall Myna if its source is newer)"
        )

    def names(self) -> list[str]:
        """Every plugin's name, registered or declared, sorted."""
        return sorted({*self._items, *self._entry_points()})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._items or name in self._entry_points())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __getitem__(self, name: str) -> T:
        return self.require(name)

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._declared is None:
            self._declared = {point.name: point for point in entry_points(group=self.group)}
        return self._declared
