"""A core install (`pip install myna`, no extras) reads traces and learns models, and `myna --help`
loads no stage.

The core case runs the real `myna` in a child process whose imports of every installed
distribution outside the core's dependency closure (read from Myna's own metadata, so it follows
`pyproject.toml`) fail as they would in a venv without the extras: what the core commands import
is exactly what a lean install has, and a command needing an extra names it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from myna.cli import COMMANDS, stage_commands
from tests.traces.helpers import entry, har

_BLOCKER = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = frozenset({blocked!r})


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
sys.argv[0] = "myna"
from myna.cli import main

main()
"""


def _name(distribution: str) -> str:
    return canonicalize_name(distribution)


def _core_closure() -> set[str]:
    """Myna and every distribution its requirements without extras pull in on this platform."""
    closure: set[str] = set()
    pending = ["myna"]
    while pending:
        name = pending.pop()
        if name in closure:
            continue
        closure.add(name)
        for line in requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(_name(requirement.name))
    return closure


def _lean_myna(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    core = _core_closure()
    blocked = sorted(
        module
        for module, distributions in packages_distributions().items()
        if not any(_name(distribution) in core for distribution in distributions)
    )
    return subprocess.run(
        [sys.executable, "-c", _BLOCKER.format(blocked=blocked), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_the_core_has_no_server_mcp_gymnasium_or_faker() -> None:
    core = _core_closure()
    for extra in ("fastapi", "uvicorn", "sqlalchemy", "mcp", "gymnasium", "faker", "psycopg"):
        assert extra not in core


def test_a_core_install_imports_traces_and_learns_a_model(tmp_path: Path) -> None:
    records = '{"result": [{"sys_id": "%s", "number": "INC00%d", "state": "1"}]}'
    recording = har(
        [
            entry(
                f"https://acme.example/api/now/table/incident/{n:032x}",
                response_text=records % (f"{n:032x}", n),
            )
            for n in range(1, 6)
        ]
    )
    (tmp_path / "browse.har").write_text(json.dumps(recording))

    imported = _lean_myna("traces", "import", "browse.har", "-o", "traces.jsonl", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    learned = _lean_myna("learn", "traces.jsonl", "--service", "itsm", "-o", "m.yaml", cwd=tmp_path)
    assert learned.returncode == 0, learned.stderr
    assert "incident" in (tmp_path / "m.yaml").read_text()


def test_a_command_needing_an_extra_names_it_in_one_line(tmp_path: Path) -> None:
    done = _lean_myna("serve", "itsm", cwd=tmp_path)

    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "pip install 'myna[serve]'" in line


def test_root_help_imports_no_stage() -> None:
    probe = (
        "import sys; sys.argv = ['myna', '--help']\n"
        "from myna.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(name for name in sys.modules if name.startswith('myna.'))\n"
        "print(loaded, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stderr.strip() == "['myna.cli', 'myna.errors']"
    for name in COMMANDS:
        assert name in done.stdout


def test_the_root_help_lines_are_the_commands_own() -> None:
    registered: dict[str, str] = {}
    for module_name in {module for module, _ in COMMANDS.values()}:
        group = stage_commands(module_name)
        for name, command in group.commands.items():
            registered[name] = (command.help or "").strip().splitlines()[0]
    assert registered == {name: help_line for name, (_, help_line) in COMMANDS.items()}
