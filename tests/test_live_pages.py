"""Live pages with the Python SDK: a page's `./api/watch` stream open on the
run club, a run logged through MCP (`command log_run` from the SDK client)
reaches it as a `write` event carrying the row, who and how, within a
second (the stream read as a browser's EventSource reads it)."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx2
import pytest

from conftest import RUN_CLUB, Shed, ok

pytestmark = pytest.mark.anyio


async def next_event(lines: Any) -> dict[str, Any]:
    """The next Server-Sent Event with data: its name, id and data."""
    event: dict[str, Any] = {"event": "message", "id": None, "data": ""}
    async for line in lines:
        if line == "":
            if event["data"]:
                event["data"] = json.loads(event["data"])
                return event
            event = {"event": "message", "id": None, "data": ""}
        elif line.startswith("event:"):
            event["event"] = line[6:].strip()
        elif line.startswith("id:"):
            event["id"] = line[3:].strip()
        elif line.startswith("data:"):
            event["data"] += line[5:].strip()
    raise AssertionError("the stream ended")


async def test_a_run_logged_through_mcp_reaches_a_watching_page(shed: Shed) -> None:
    shed.person("ada")
    shed.space("demo", "ada")
    shed.deploy(RUN_CLUB, "demo/runs", "ada")
    shed.serve()
    headers = {"Authorization": f"Bearer {shed.token('ada')}", "Host": f"demo.localhost:{shed.port}"}
    watch = f"http://127.0.0.1:{shed.port}/runs/api/watch?filter=.jog%21"
    async with httpx2.AsyncClient(timeout=30) as http:
        async with http.stream("GET", watch, headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"] == "text/event-stream"
            lines = stream.aiter_lines()
            async with shed.http("ada") as client:
                logged = ok(
                    await client.call_tool(
                        "command", {"name": "log_run", "args": {"who": "Ada", "miles": "5", "at": "2026-09-01"}}
                    )
                )
                acknowledged = time.monotonic()
            with anyio.fail_after(1):
                event = await next_event(lines)
            took = time.monotonic() - acknowledged
    assert event["event"] == "write"
    assert event["id"] == str(logged["version"])
    data = event["data"]
    assert data["entities"] == logged["entities"]
    assert data["rows"][0]["jog"]["who"] == "Ada"
    assert (data["by"]["handle"], data["door"], data["command"]) == ("ada", "mcp", "log_run")
    assert took < 1, took
