"""`python -m myna.backends [NAME...]`: learn built-in back ends' models again.

Each named back end (every one when none is named) learns its shipped corpus into its overlay
(`Backend.learn`) and writes the result over its `model.yaml`, which a test checks reproduces.
"""

from __future__ import annotations

import argparse

from myna.backends import BACKENDS
from myna.schemas.openapi import dumps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", metavar="NAME", help=", ".join(sorted(BACKENDS)))
    chosen = parser.parse_args(argv).names or sorted(BACKENDS)
    unknown = sorted(set(chosen) - set(BACKENDS))
    if unknown:
        parser.error(f"no built-in back end {', '.join(unknown)}")
    for name in chosen:
        backend = BACKENDS[name]
        target = backend.resource(backend.model)
        with open(str(target), "w", encoding="utf-8") as out:
            out.write(dumps(backend.learn()))
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
