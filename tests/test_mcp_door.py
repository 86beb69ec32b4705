"""The MCP door itself: one tool list for everybody, the DNS-rebinding guard
on Host and Origin, ping and concurrent calls in one session, and the
resources/list_changed a deploy sends to the sessions whose views it moved."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from conftest import RUN_CLUB, Heard, Shed, ok

pytestmark = pytest.mark.anyio

PROTOCOL = "2026-07-28"


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON-RPC request as a 2026-07-28 client sends it, with no session."""
    meta = {"io.modelcontextprotocol/protocolVersion": PROTOCOL, "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": meta}}


def post(shed: Shed, body: dict[str, Any], **headers: str) -> httpx2.Response:
    routing = {"Mcp-Method": body["method"]}
    if body["method"] == "tools/call":
        routing["Mcp-Name"] = body["params"]["name"]
    return httpx2.post(
        f"http://127.0.0.1:{shed.port}/mcp",
        json=body,
        headers={
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Host": f"localhost:{shed.port}",
            **routing,
            **headers,
        },
        timeout=10,
    )


def test_the_tool_list_is_the_same_bytes_signed_out_and_for_two_people(two: Shed) -> None:
    signed_out = post(two, rpc("tools/list"))
    ada = post(two, rpc("tools/list"), Authorization=f"Bearer {two.token('ada')}")
    bo = post(two, rpc("tools/list"), Authorization=f"Bearer {two.token('bo')}")
    assert signed_out.status_code == ada.status_code == bo.status_code == 200
    assert signed_out.content == ada.content == bo.content
    tools = signed_out.json()["result"]["tools"]
    assert [t["name"] for t in tools] == [
        "commands",
        "command",
        "graph_query",
        "graph_apply",
        "app_files",
        "app_deploy",
        "spaces",
    ]
    hints = {
        t["name"]: [t["annotations"].get(hint) for hint in ("readOnlyHint", "destructiveHint", "idempotentHint")]
        for t in tools
    }
    # read-only, destructive, idempotent
    assert hints == {
        "commands": [True, False, True],
        "command": [False, True, False],
        "graph_query": [True, False, True],
        "graph_apply": [False, True, False],
        "app_files": [False, True, True],
        "app_deploy": [False, True, False],
        "spaces": [True, False, True],
    }
    assert all(t["annotations"].get("openWorldHint") is False for t in tools)
    assert all(t["title"] and t["annotations"].get("title") == t["title"] for t in tools)
    assert all(t["description"] and t["inputSchema"]["type"] == "object" for t in tools)


async def test_the_sdk_lists_the_same_tools_for_everybody(two: Shed) -> None:
    listings = []
    for handle in (None, "ada", "bo"):
        async with two.http(handle) as client:
            listings.append([t.model_dump(by_alias=True) for t in (await client.list_tools()).tools])
    assert listings[0] == listings[1] == listings[2]


def test_a_foreign_host_or_origin_is_refused_with_403(two: Shed) -> None:
    assert post(two, rpc("tools/list"), Host="evil.example").status_code == 403
    assert post(two, rpc("tools/list"), Host=f"evil.example:{two.port}").status_code == 403
    assert post(two, rpc("tools/list"), Origin="http://evil.example").status_code == 403
    assert post(two, rpc("tools/list"), Origin=f"http://localhost:{two.port + 1}").status_code == 403
    assert post(two, rpc("tools/list")).status_code == 200
    assert post(two, rpc("tools/list"), Origin=f"http://localhost:{two.port}").status_code == 200
    assert post(two, rpc("tools/list"), Host=f"127.0.0.1:{two.port}").status_code == 200


async def test_ping_and_concurrent_calls_in_one_session(two: Shed) -> None:
    async with two.http("ada", mode="legacy") as client:
        await client.session.send_ping()
        results: dict[int, Any] = {}

        async def log(i: int) -> None:
            results[i] = await client.call_tool(
                "command", {"name": "log_run", "args": {"who": f"runner {i}", "miles": i, "at": "2026-09-01"}}
            )

        async with anyio.create_task_group() as group:
            for i in range(12):
                group.start_soon(log, i)
        eids = {ok(result)["aliases"]["$run"] for result in results.values()}
        assert len(eids) == 12
        rows = ok(await client.call_tool("command", {"name": "leaderboard"}))["rows"]
        assert {row["jog"]["who"] for row in rows} == {f"runner {i}" for i in range(12)}


async def test_a_deploy_tells_a_session_whose_views_it_changed(two: Shed) -> None:
    handler = Heard()
    heard = handler.methods
    async with two.http("bo", mode="legacy", message_handler=handler) as client:
        assert (await client.list_resources()).resources == []
        await anyio.sleep(0.3)
        two.deploy(RUN_CLUB, "ada/other", "ada", "--title", "Not Bo's")  # not in Bo's reach
        await anyio.sleep(1.5)
        assert "notifications/resources/list_changed" not in heard
        two.deploy(RUN_CLUB, "bo/runs", "bo", "--title", "Bo's runs")
        await handler.until("notifications/resources/list_changed")
        uris = [r.uri for r in (await client.list_resources(cache_mode="bypass")).resources]
        assert uris == ["ui://bo/runs/leaderboard.html"]


async def test_a_listening_client_hears_of_a_deploy_that_changed_its_views(two: Shed, tmp_path: Path) -> None:
    async with two.http("bo") as client:
        assert client.protocol_version == PROTOCOL
        async with client.listen(resources_list_changed=True) as subscription:
            two.deploy(RUN_CLUB, "bo/runs", "bo", "--title", "Bo's runs")
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert type(event).__name__ == "ResourcesListChanged"
            # The view changed and deployed again is a new page under the
            # same name: a client that reaches it is told. (The same folder
            # again is no new version, so nothing to tell.)
            changed = tmp_path / "runs"
            shutil.copytree(RUN_CLUB, changed)
            view = changed / "leaderboard.html"
            view.write_text(view.read_text() + "\n<!-- changed -->\n")
            two.deploy(changed, "bo/runs", "bo", "--title", "Bo's runs")
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert type(event).__name__ == "ResourcesListChanged"
        uris = [r.uri for r in (await client.list_resources(cache_mode="bypass")).resources]
        assert uris == ["ui://bo/runs/leaderboard.html"]


def test_a_bad_call_is_a_sentence_not_a_crash(two: Shed) -> None:
    token = two.token("ada")
    answer = post(
        two,
        rpc("tools/call", {"name": "command", "arguments": {"args": {"who": "Ada"}}}),
        Authorization=f"Bearer {token}",
    )
    result = answer.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "command needs name — the command's name, as commands lists it"
    unknown = post(two, rpc("tools/call", {"name": "deploy", "arguments": {}}), Authorization=f"Bearer {token}")
    assert json.dumps(unknown.json()["error"]["message"]).startswith('"no tool deploy')
