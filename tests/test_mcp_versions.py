"""Every protocol version a client may speak, as raw JSON-RPC over HTTP (the
SDK negotiates only its own): a client that initializes with 2025-03-26,
2025-06-18 or 2025-11-25 is answered that same version and a session, and in
it lists the seven tools, reads the run club's leaderboard, logs a run with
`command` and sees the run in the next read; a 2026-07-28 client does the
same with no initialize and no session, each request carrying the version in
its header and its `_meta`. Answers may come as JSON or as an SSE stream;
both are read."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from conftest import Shed
from test_mcp_door import post, rpc

TOOLS = ["commands", "command", "graph_query", "graph_apply", "app_files", "app_deploy", "spaces"]

# The versions a client opens a session with; from 2025-06-18 on it names
# the version in an MCP-Protocol-Version header on every later request.
SESSION_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"]
HEADER_SINCE = "2025-06-18"


def answer(response: httpx2.Response, id: int) -> dict[str, Any]:
    """The JSON-RPC answer to request `id` in an HTTP answer, whether that is
    one JSON body or an SSE stream (its events' `data:` lines; an event with
    empty data, as a priming event has, carries no message)."""
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    kind = response.headers.get("content-type", "")
    if kind.startswith("application/json"):
        messages = [response.json()]
    else:
        assert kind.startswith("text/event-stream"), kind
        messages = []
        for event in response.text.replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(
                line[len("data:") :].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")
            )
            if data.strip():
                messages.append(json.loads(data))
    answers = [m for m in messages if m.get("id") == id and ("result" in m or "error" in m)]
    assert len(answers) == 1, messages
    assert "error" not in answers[0], answers[0]
    return answers[0]


def result(response: httpx2.Response, id: int) -> dict[str, Any]:
    """The result of request `id`; a tool's result must not be an error."""
    done = answer(response, id)["result"]
    assert done.get("isError") is not True, done
    return done


def leaderboard_who(done: dict[str, Any]) -> list[str]:
    """Who logged each run, from a leaderboard tool result."""
    return [row["jog"]["who"] for row in done["structuredContent"]["rows"]]


class Session:
    """A client holding an MCP session of one protocol version, raw."""

    def __init__(self, shed: Shed, version: str) -> None:
        self.shed = shed
        self.version = version
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {shed.token('ada')}",
        }
        self.id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> httpx2.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        if not notify:
            self.id += 1
            body["id"] = self.id
        return httpx2.post(self.shed.mcp_url, json=body, headers=self.headers, timeout=30)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return result(self.send(method, params), self.id)

    def initialize(self) -> dict[str, Any]:
        params = {
            "protocolVersion": self.version,
            "capabilities": {},
            "clientInfo": {"name": "test_mcp_versions", "version": "1"},
        }
        response = self.send("initialize", params)
        done = result(response, self.id)
        session = response.headers.get("mcp-session-id")
        assert session, dict(response.headers)
        self.headers["Mcp-Session-Id"] = session
        if self.version >= HEADER_SINCE:
            self.headers["MCP-Protocol-Version"] = self.version
        initialized = self.send("notifications/initialized", notify=True)
        assert initialized.status_code == 202, f"{initialized.status_code}: {initialized.text}"
        return done


@pytest.mark.parametrize("version", SESSION_VERSIONS)
def test_a_client_in_a_session_of_each_version_lists_reads_and_writes(two: Shed, version: str) -> None:
    client = Session(two, version)
    initialized = client.initialize()
    assert initialized["protocolVersion"] == version
    assert initialized["serverInfo"]["name"] == "shed"
    assert "tools" in initialized["capabilities"]

    tools = client.call("tools/list")["tools"]
    assert [tool["name"] for tool in tools] == TOOLS

    assert leaderboard_who(client.call("tools/call", {"name": "command", "arguments": {"name": "leaderboard"}})) == []

    run = {"who": f"Ada on {version}", "miles": 5, "at": "2026-09-01"}
    wrote = client.call("tools/call", {"name": "command", "arguments": {"name": "log_run", "args": run}})
    assert wrote["structuredContent"]["aliases"]["$run"]

    board = client.call("tools/call", {"name": "command", "arguments": {"name": "leaderboard"}})
    assert leaderboard_who(board) == [f"Ada on {version}"]
    assert board["structuredContent"]["rows"][0]["jog"]["miles"] == 5


def test_a_sessionless_2026_07_28_client_lists_reads_and_writes(two: Shed) -> None:
    ada = f"Bearer {two.token('ada')}"

    def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = post(two, rpc(method, params), Authorization=ada)
        assert "mcp-session-id" not in response.headers, dict(response.headers)
        return result(response, 1)

    tools = call("tools/list")["tools"]
    assert [tool["name"] for tool in tools] == TOOLS

    assert leaderboard_who(call("tools/call", {"name": "command", "arguments": {"name": "leaderboard"}})) == []

    run = {"who": "Ada on 2026-07-28", "miles": 5, "at": "2026-09-01"}
    wrote = call("tools/call", {"name": "command", "arguments": {"name": "log_run", "args": run}})
    assert wrote["structuredContent"]["aliases"]["$run"]

    board = call("tools/call", {"name": "command", "arguments": {"name": "leaderboard"}})
    assert leaderboard_who(board) == ["Ada on 2026-07-28"]
    assert board["structuredContent"]["rows"][0]["jog"]["miles"] == 5
