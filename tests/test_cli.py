"""The `myna` command as a user runs it: help, version, `traces import`/`stats`, and bad input.

Exit codes and the one-line error come from `myna.cli.main`, so those cases run it in a child
process; the rest use Typer's in-process runner.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from myna import __version__
from myna.cli import app
from tests.traces.helpers import CORPUS, HAR_CORPUS, corpus_hars, entry, har

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "traces" / "fixtures"
runner = CliRunner()


def myna(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from myna.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def test_help_lists_the_traces_commands() -> None:
    done = myna("--help")

    assert done.returncode == 0
    assert "traces" in done.stdout


def test_version() -> None:
    done = myna("--version")

    assert (done.returncode, done.stdout.strip()) == (0, f"myna {__version__}")


def test_usage_errors_exit_2() -> None:
    done = myna("traces", "import", FIXTURES / "mcp.jsonl")

    assert done.returncode == 2
    assert "--output" in done.stderr


def _write(path: Path, content: object) -> Path:
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("cut.har", '{"log": {"entries": [{"request": {"method": "GET"', "entry 0"),
        ("noentries.har", {"log": {"version": "1.2", "creator": {}}}, "field log.entries"),
        ("norequest.har", har([entry(), {"response": {"status": 200}}]), "entry 1"),
        ("tickets.csv", "number,state\nINC001,New\n", "cannot tell the trace format"),
        ("cut.jsonl", '{"type": "session", "version": 1, "id": "s"}\n{"type": "mess', "line 2"),
        ("missing.har", None, "cannot read the file"),
        (
            "cassette.yaml",
            "interactions:\n- request: {method: GET, uri: 'https://h/'}\n  response: {}\n",
            "entry 0, field interactions[0].response.status.code",
        ),
    ],
    ids=[
        "truncated",
        "no-entries",
        "no-request",
        "unknown-format",
        "truncated-jsonl",
        "unreadable",
        "cassette-without-status",
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_output(
    tmp_path: Path, name: str, content: object, where: str
) -> None:
    source = tmp_path / name if content is None else _write(tmp_path / name, content)
    good = _write(tmp_path / "good.har", har([entry()]))
    out = tmp_path / "out" / "traces.jsonl"
    out.parent.mkdir()

    done = myna("traces", "import", good, source, "-o", out)

    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ")
    assert str(source) in line
    assert where in line
    assert list(out.parent.iterdir()) == []


def test_an_unknown_format_name_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"

    done = myna("traces", "import", FIXTURES / "mcp.jsonl", "--format", "postman", "-o", out)

    assert done.returncode == 2
    assert "unknown format 'postman'" in done.stderr
    assert not out.exists()


def test_import_writes_jsonl_and_reports_what_it_skipped(tmp_path: Path) -> None:
    recording = har(
        [
            entry(),
            entry("https://h.example/logo.png", response_mime="image/png", response_text="x"),
            entry("wss://h.example/live", status=101, _resourceType="websocket"),
        ]
    )
    source = _write(tmp_path / "browse.har", recording)
    out = tmp_path / "out.jsonl"

    result = runner.invoke(app, ["traces", "import", str(source), "-o", str(out)])

    assert result.exit_code == 0, result.output
    assert "skipped (static)" in result.output
    assert "skipped (websocket)" in result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["session", "exchange"]


def test_import_applies_filters_and_pseudonymisation(tmp_path: Path) -> None:
    body = '{"result": [{"email": "beth.anglin@acme.com"}]}'
    recording = har([entry(response_text=body), entry(method="POST", status=201)])
    source = _write(tmp_path / "r.har", recording)
    out = tmp_path / "out.jsonl"

    result = runner.invoke(
        app,
        ["traces", "import", str(source), "-o", str(out), "--method", "get", "--status", "2xx"],
        env={"MYNA_PSEUDONYMISE_KEY": "secret"},
    )

    assert result.exit_code == 0, result.output
    assert "skipped (filtered)" in result.output
    (exchange,) = [json.loads(line) for line in out.read_text().splitlines()][1:]
    assert exchange["method"] == "GET"
    assert exchange["response_body"]["value"]["result"][0]["email"] != "beth.anglin@acme.com"


def test_stats_json_counts_tool_calls_per_tool() -> None:
    result = runner.invoke(
        app,
        [
            "traces",
            "stats",
            "--json",
            str(FIXTURES / "anthropic.json"),
            str(FIXTURES / "mcp.jsonl"),
        ],
    )

    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert (stats["sessions"], stats["tool_calls"]) == (2, 7)
    assert stats["tool_calls_per_tool"]["close_incident"] == 2
    assert stats["tool_errors_per_tool"] == {
        "add_comment": 1,
        "close_incident": 1,
        "get_incident": 1,
        "reopen_incident": 1,
    }
    assert stats["skipped"] == {"mcp_other": 5, "thinking_block": 1}


def test_stats_tables_show_hosts_methods_statuses_and_tools() -> None:
    result = runner.invoke(app, ["traces", "stats", str(FIXTURES / "anthropic.json")])

    assert result.exit_code == 0, result.output
    assert "Tool calls per tool" in result.output
    assert "close_incident" in result.output


def test_import_reads_cassettes_and_recordings_as_the_same_sessions(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    inputs = [FIXTURES / name for name in ("vcrpy.yaml", "vcrpy.json", "nock.json")]

    result = runner.invoke(app, ["traces", "import", *map(str, inputs), "-o", str(out)])

    assert result.exit_code == 0, result.output
    assert "queries written without ?" in result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    sessions = [line["id"] for line in lines if line["type"] == "session"]
    assert sessions == ["vcrpy.yaml", "vcrpy.json", "nock"]
    assert [line["id"] for line in lines if line["type"] == "exchange"][:2] == [
        "vcrpy.yaml#0",
        "vcrpy.yaml#1",
    ]


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "table"])
def test_stats_count_queries_written_without_question_mark(as_json: bool) -> None:
    inputs = [str(FIXTURES / name) for name in ("vcrpy.yaml", "betamax.json", "nock.json")]

    result = runner.invoke(app, ["traces", "stats", *(["--json"] if as_json else []), *inputs])

    assert result.exit_code == 0, result.output
    if as_json:
        stats = json.loads(result.output)
        assert (stats["exchanges"], stats["queries_without_question_mark"]) == (19, 3)
    else:
        assert re.search(r"queries written without \?\s+│\s+3 ", result.output)


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present at {CORPUS}")
@pytest.mark.parametrize(
    ("pattern", "files", "exchanges", "writes"),
    [("vcr/notion-sdk-py/*.yaml", 79, 334, 266), ("nock/octokit_fixtures/*.json", 22, 71, 39)],
    ids=["notion-vcr", "octokit-nock"],
)
def test_stats_prints_the_cassette_corpus_counts(
    pattern: str, files: int, exchanges: int, writes: int
) -> None:
    paths = sorted(CORPUS.glob(pattern))

    result = runner.invoke(app, ["traces", "stats", "--json", *map(str, paths)])

    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert (stats["files"], stats["sessions"], stats["exchanges"]) == (files, files, exchanges)
    assert exchanges - stats["exchanges_per_method"].get("GET", 0) == writes


@pytest.mark.corpus
@pytest.mark.skipif(not HAR_CORPUS.is_dir(), reason=f"corpus not present at {HAR_CORPUS}")
def test_stats_prints_the_corpus_counts() -> None:
    files = corpus_hars()
    expected_exchanges = sum(len(json.loads(path.read_text())["log"]["entries"]) for path in files)

    result = runner.invoke(app, ["traces", "stats", "--json", *map(str, files)])

    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert (stats["files"], stats["sessions"]) == (len(files), len(files))
    assert stats["exchanges"] == expected_exchanges
    assert sum(stats["exchanges_per_host"].values()) == expected_exchanges
    assert stats["exchanges_per_method"]["GET"] > 0
