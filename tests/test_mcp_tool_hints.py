"""Every tool says what it is: a human title and its four hints, each a
boolean, as the SDK lists them in both lifecycles — and a tool that says it
is read-only writes nothing, whatever valid arguments it is called with."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from conftest import Shed, ok

pytestmark = pytest.mark.anyio

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

# A few valid argument sets for each read-only tool, called in this order.
READS: dict[str, list[dict[str, Any]]] = {
    "commands": [{}, {"app": "runs"}, {"app": "ada/runs"}],
    "graph_query": [
        {"app": "ada/runs", "filter": ".jog!&.created!&limit=20"},
        {"app": "runs", "filter": "q=Ada"},
        {"app": "ada/runs", "filter": ".jog.miles>=5&order=-.jog.miles"},
    ],
    "spaces": [{}],
}


async def test_every_tool_has_a_title_and_its_four_hints(two: Shed) -> None:
    for mode in ("auto", "legacy"):
        async with two.http("ada", mode=mode) as client:
            tools = [t.model_dump(by_alias=True) for t in (await client.list_tools()).tools]
        assert len(tools) == 7
        for tool in tools:
            assert isinstance(tool["title"], str) and tool["title"].strip(), tool["name"]
            annotations = tool["annotations"]
            assert annotations["title"] == tool["title"], tool["name"]
            for hint in HINTS:
                assert isinstance(annotations[hint], bool), f"{tool['name']} {hint}: {annotations[hint]!r}"
            assert annotations["openWorldHint"] is False, tool["name"]
            if annotations["readOnlyHint"]:
                assert annotations["destructiveHint"] is False, tool["name"]
                assert annotations["idempotentHint"] is True, tool["name"]


async def state(shed: Shed, client: Client, run: str) -> str:
    """What a write would move: the run's entity (its version and history),
    the app's rows, the spaces' listing (versions and last deploys), the
    app's files and drafts, and the activity."""
    seen = {
        "entity": shed.run("entity", "ada/runs", run, "--as", "ada").stdout,
        "rows": ok(await client.call_tool("graph_query", {"app": "ada/runs", "filter": ".jog!&.doc!&.created!"})),
        "spaces": ok(await client.call_tool("spaces", {})),
        "files": ok(await client.call_tool("app_files", {"app": "ada/runs"})),
        "activity": shed.run("activity", "--as", "ada").stdout,
    }
    return json.dumps(seen, sort_keys=True)


async def test_a_read_only_tool_never_writes(two: Shed) -> None:
    async with two.http("ada") as client:
        tools = (await client.list_tools()).tools
        read_only = [t.name for t in tools if t.annotations is not None and t.annotations.read_only_hint]
        # Each tool that says it reads has calls here to show it.
        assert read_only and set(read_only) <= set(READS), read_only
        logged = ok(
            await client.call_tool(
                "command", {"name": "log_run", "args": {"who": "Ada", "miles": 6, "at": "2026-09-01"}}
            )
        )
        run = logged["aliases"]["$run"]
        before = await state(two, client, run)
        for name in read_only:
            for args in READS[name]:
                ok(await client.call_tool(name, args))
                assert await state(two, client, run) == before, f"{name} {args} changed something"
