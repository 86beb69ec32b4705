"""What a model reads: every tool's text is its first line and then its
structured answer as compact JSON (most MCP clients hand a model only the
text), bounded — past the bound the text keeps the first rows whole and ends
with a line saying how many more there are and how to read them — and a
`commands` listing of hundreds of apps lists the apps, not every command."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from conftest import RUN_CLUB, Shed, ok, text

pytestmark = pytest.mark.anyio

# shed_host::ANSWER_TEXT_BYTES: the most bytes of text one answer hands a model.
TEXT_BOUND = 24 * 1024

RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}


def run_club_files() -> dict[str, str]:
    return {path.name: path.read_text() for path in RUN_CLUB.iterdir() if path.is_file()}


def data_line(result: Any) -> Any:
    """The answer's last text line read as JSON: it must be the structured
    answer, whole."""
    data = json.loads(text(result).splitlines()[-1])
    assert data == ok(result)
    return data


def bounded(result: Any, noun: str) -> tuple[list[str], Any]:
    """A text bounded past its size: its lines, and the JSON it kept."""
    said = text(result)
    assert len(said.encode()) <= TEXT_BOUND, f"{len(said.encode())} bytes of text"
    lines = said.splitlines()
    assert len(lines) == 3, said[:2000]
    assert lines[2].startswith("… and "), lines[2]
    assert f" more {noun} not shown here" in lines[2], lines[2]
    return lines, json.loads(lines[1])


async def test_every_read_and_write_says_its_line_then_its_answer_as_json(two: Shed) -> None:
    async with two.http("ada") as client:
        wrote = await client.call_tool("command", {"name": "log_run", "args": RUN})
        assert text(wrote).splitlines()[0].startswith("log_run: wrote 1 entity in ada/runs: $run=")
        assert data_line(wrote)["entities"] == [data_line(wrote)["aliases"]["$run"]]

        board = await client.call_tool("command", {"name": "leaderboard"})
        first, second = text(board).splitlines()
        assert first == "leaderboard: 1 row in ada/runs"
        rows = json.loads(second)["rows"]
        assert [row["jog"]["who"] for row in rows] == ["Ada"]
        assert json.loads(second) == ok(board)

        query = await client.call_tool("graph_query", {"app": "ada/runs", "filter": ".jog!"})
        assert text(query).splitlines()[0] == "ada/runs: 1 row"
        assert data_line(query)["rows"][0]["jog"]["miles"] == 5

        applied = await client.call_tool(
            "graph_apply", {"app": "ada/runs", "bundle": {"entity": {"eid": "$r"}, "jog": {"who": "Bo", "miles": 2}}}
        )
        assert text(applied).splitlines()[0].startswith("ada/runs: wrote 1 entity: $r=")
        assert data_line(applied)["version"] >= 2

        files = await client.call_tool("app_files", {"app": "ada/runs", "read": ["vocab.json"]})
        assert data_line(files)["read"][0]["path"] == "vocab.json"

        deployed = await client.call_tool("app_deploy", {"app": "ada/runs", "title": "Ada's runs"})
        assert text(deployed).splitlines()[0].startswith("deployed ada/runs v2")
        assert data_line(deployed)["version"] == 2

        spaces = await client.call_tool("spaces", {})
        assert text(spaces).splitlines()[0] == "you belong to 1 space, with 1 app in them: ada (owner, 1 app)"
        assert data_line(spaces)["spaces"][0]["apps"][0]["at"] == "ada/runs"

        commands = await client.call_tool("commands", {})
        assert text(commands).splitlines()[0] == "## ada/runs"
        assert [row["name"] for row in data_line(commands)["commands"]] == [
            "log_run",
            "leaderboard",
            "since",
            "add_jog",
            "find_jog",
        ]


async def test_many_rows_are_bounded_whole_with_a_line_saying_how_many_more(two: Shed) -> None:
    runs = [
        {"entity": {"eid": f"$r{i}"}, "doc": {"title": f"Run {i} " + "long title " * 8}, "jog": {"who": "Ada", "miles": i}}
        for i in range(400)
    ]
    async with two.http("ada") as client:
        ok(await client.call_tool("graph_apply", {"app": "ada/runs", "bundle": runs}))

        query = await client.call_tool("graph_query", {"app": "ada/runs", "filter": ".jog!&.doc?&limit=1000"})
        everything = ok(query)["rows"]
        assert len(everything) == 400, "structuredContent stays whole"
        lines, kept = bounded(query, "rows")
        assert lines[0] == "ada/runs: 400 rows"
        shown = kept["rows"]
        assert 0 < len(shown) < 400
        assert shown == everything[: len(shown)], "the text keeps the first rows, each whole"
        assert lines[2].startswith(f"… and {400 - len(shown)} more rows not shown here"), lines[2]
        assert f"limit={len(shown)}" in lines[2] and "after=" in lines[2], lines[2]

        # A page of 50 rows that fits the bound is shown whole.
        page = await client.call_tool("command", {"name": "find_jog", "args": {"limit": 50}})
        assert text(page).splitlines()[0] == "find_jog: 50 rows in ada/runs"
        assert len(data_line(page)["rows"]) == 50


async def test_hundreds_of_apps_are_listed_as_apps_and_one_app_whole(two: Shed) -> None:
    files = run_club_files()
    apps = [f"ada/runs-{i}" for i in range(1, 300)]

    async with two.http("ada") as client:
        with anyio.fail_after(300):
            for app in apps:
                ok(await client.call_tool("app_files", {"app": app, "write": files}))
                ok(await client.call_tool("app_deploy", {"app": app, "title": "Run club"}))

        listing = await client.call_tool("commands", {})
        summary = ok(listing)["apps"]
        assert len(summary) == 300
        assert summary[0] == {
            "app": "ada/runs",
            "title": "Run club",
            "commands": 5,
            "offers": "log_run, leaderboard, since, add_jog, find_jog",
        }
        said = text(listing)
        assert len(said.encode()) <= TEXT_BOUND, f"{len(said.encode())} bytes of text"
        assert said.splitlines()[0] == (
            "300 apps in your spaces offer 1500 commands — too many to list in one answer, so here "
            "are the apps with their commands by name; call commands with app (its slug, or space/app) "
            "for one app's commands, whole"
        )
        lines, kept = bounded(listing, "apps")
        assert kept["apps"] == summary[: len(kept["apps"])]
        assert "call commands with app" in lines[2]

        one = await client.call_tool("commands", {"app": "ada/runs-7"})
        assert text(one).splitlines()[0] == "## ada/runs-7"
        # The app's heading, its five commands (the first saying the app's
        # title and address, once), the line saying what a time argument
        # takes; then the answer as JSON.
        listed = text(one).splitlines()[:-1]
        assert len(listed) == 7 and "Run club, an app at ada.localhost:" in listed[1], listed
        assert "/runs-7/" in listed[1] and not any("an app at" in line for line in listed[2:6]), listed
        assert listed[6].startswith("at, since: a time, like "), listed[6]
        assert len(data_line(one)["commands"]) == 5

        spaces = await client.call_tool("spaces", {})
        assert len(ok(spaces)["spaces"][0]["apps"]) == 300
        lines, kept = bounded(spaces, "apps")
        assert lines[0].startswith("you belong to 1 space, with 300 apps in them: ada (owner, 300 apps)")
        shown = kept["spaces"][0]["apps"]
        assert shown == ok(spaces)["spaces"][0]["apps"][: len(shown)]
