"""Deploys through the MCP door (`app_files` then `app_deploy`): a bad
manifest is refused in one sentence and changes nothing; a column added to a
kind is an argument added to its generated commands; two apps spelling one
command, and a name nobody has."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import RUN_CLUB, Shed, ok, refused, text

pytestmark = pytest.mark.anyio

RUN = {"who": "Ada", "miles": 5, "at": "2026-09-01"}


def run_club_files() -> dict[str, str]:
    return {path.name: path.read_text() for path in RUN_CLUB.iterdir() if path.is_file()}


async def deploy(client: Any, app: str, files: dict[str, str | None], **options: str) -> Any:
    """Writes the files, then deploys them: the deploy's tool result."""
    ok(await client.call_tool("app_files", {"app": app, "write": files}))
    return await client.call_tool("app_deploy", {"app": app, **options})


@pytest.fixture
def jeff(shed: Shed) -> Shed:
    shed.person("jeff", "Jeff")
    shed.space("jeff", "jeff")
    shed.serve()
    return shed


async def test_a_deploy_through_mcp_names_the_commands_it_planted(jeff: Shed) -> None:
    async with jeff.http("jeff") as client:
        deployed = await deploy(client, "jeff/runs", run_club_files(), title="Run club")
        ok(deployed)
        *said, answer = text(deployed).splitlines()
        assert said == [
            f"deployed jeff/runs v1: http://jeff.localhost:{jeff.port}/runs/",
            "commands: log_run, leaderboard, since, add_jog, find_jog",
        ]
        assert json.loads(answer) == ok(deployed)


async def test_a_bad_manifest_is_one_sentence_and_the_old_commands_still_answer(jeff: Shed) -> None:
    async with jeff.http("jeff") as client:
        ok(await deploy(client, "jeff/runs", run_club_files(), title="Run club"))
        bad = {
            "bad": {
                "description": "A command with two mistakes in it",
                "input": {},
                "query": ".jog!&.jog.who={{who}}",
                "screen": "board.html",
            }
        }
        refusal = refused(await deploy(client, "jeff/runs", {"tools.json": json.dumps(bad)}))
        assert refusal == (
            "tools.json: bad: screen — a tool says description, input, apply, query, view, confirm; "
            "bad: {{who}} names no input — declare it in bad.input"
        )
        logged = await client.call_tool("command", {"name": "log_run", "args": RUN})
        ok(logged)
        listed = ok(await client.call_tool("commands", {}))
        assert [c["name"] for c in listed["commands"]][:3] == ["log_run", "leaderboard", "since"]
        assert "bad" not in [c["name"] for c in listed["commands"]]


async def test_a_column_added_to_a_kind_is_an_argument_added_to_its_commands(jeff: Shed) -> None:
    async with jeff.http("jeff") as client:
        ok(await deploy(client, "jeff/runs", run_club_files(), title="Run club"))

        def inputs(listing: Any, name: str) -> list[str]:
            command = next(c for c in listing["commands"] if c["name"] == name)
            return list(command["input"]["properties"])

        before = ok(await client.call_tool("commands", {"app": "jeff/runs"}))
        assert "route" not in inputs(before, "add_jog")
        vocab = {"jog": {"who": "text", "miles": "number", "at": "time", "route": "text"}}
        ok(await deploy(client, "jeff/runs", {"vocab.json": json.dumps(vocab)}))
        after = ok(await client.call_tool("commands", {"app": "jeff/runs"}))
        assert "route" in inputs(after, "add_jog")
        assert "route" in inputs(after, "find_jog")

        added = await client.call_tool(
            "command", {"name": "add_jog", "args": {"title": "Hill loop", "who": "Ada", "route": "the hill"}}
        )
        ok(added)
        found = ok(await client.call_tool("command", {"name": "find_jog", "args": {"route": "the hill"}}))
        assert [row["jog"]["route"] for row in found["rows"]] == ["the hill"]


async def test_two_apps_spelling_one_command_ask_which_and_a_name_nobody_has_offers_what_there_is(
    shed: Shed,
) -> None:
    shed.person("jeff", "Jeff")
    shed.space("jeff", "jeff")
    shed.space("club", "jeff")
    shed.deploy(RUN_CLUB, "jeff/runs", "jeff", "--title", "Run club")
    shed.deploy(RUN_CLUB, "club/runs", "jeff", "--title", "Club runs")
    shed.serve()
    async with shed.http("jeff") as client:
        which = refused(await client.call_tool("command", {"name": "log_run", "args": RUN}))
        assert which == "log_run is a command of club/runs and jeff/runs — say which app"

        chosen = ok(await client.call_tool("command", {"name": "log_run", "args": RUN, "app": "jeff/runs"}))
        board = ok(await client.call_tool("command", {"name": "leaderboard", "app": "jeff/runs"}))
        assert [r["entity"]["eid"] for r in board["rows"]] == chosen["entities"]
        other = ok(await client.call_tool("command", {"name": "leaderboard", "app": "club/runs"}))
        assert other["rows"] == []

        offer = refused(await client.call_tool("command", {"name": "add_run", "args": {}}))
        assert offer.startswith("no command add_run — the apps here offer ")
        assert "club/runs: log_run, leaderboard, since" in offer
        assert "jeff/runs: log_run, leaderboard, since" in offer
        assert offer.endswith("commands lists them with their arguments.")
