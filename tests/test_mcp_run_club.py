"""The run club story end to end, as a newcomer lives it: `shed up` on a new
data folder, then an MCP client over Streamable HTTP (and one over stdio)
lists the commands, logs a run, reads the board and the view."""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import datetime, timezone
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from conftest import RUN_CLUB, Shed, ok, refused, text

pytestmark = pytest.mark.anyio


@pytest.fixture
def up(shed: Shed) -> Any:
    """`shed up` on a fresh data folder: what it printed, and the server it runs."""
    shed.process = subprocess.Popen(
        [str(shed.bin), "up", "--data", str(shed.data), "--listen", f"127.0.0.1:{shed.port}"],
        env=shed.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert shed.process.stdout is not None
    printed = []
    for line in shed.process.stdout:
        printed.append(line)
        if line.startswith("Then ask your agent"):
            break
    welcome = "".join(printed)
    token = next(line.split()[-1] for line in printed if line.startswith("Token:"))
    shed.tokens["you"] = token
    deadline = time.monotonic() + 20
    while True:
        try:
            import socket

            socket.create_connection(("127.0.0.1", shed.port), timeout=0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "shed up did not start serving"
            time.sleep(0.05)
    return welcome


def test_up_prints_the_address_the_token_and_a_client_configuration(shed: Shed, up: str) -> None:
    assert f"MCP address: {shed.mcp_url}" in up
    assert f"The app:     http://demo.localhost:{shed.port}/runs/" in up
    assert "deployed demo/runs v1" in up
    config = json.loads(up[up.index("{") : up.index("\n}\n") + 2])
    server = config["mcpServers"]["shed"]
    assert server["url"] == shed.mcp_url
    assert server["headers"]["Authorization"] == f"Bearer {shed.tokens['you']}"


def test_up_on_an_existing_folder_just_serves(shed: Shed, up: str) -> None:
    shed.stop()
    again = subprocess.Popen(
        [str(shed.bin), "up", "--data", str(shed.data), "--listen", f"127.0.0.1:{shed.port}"],
        env=shed.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert again.stdout is not None
        line = again.stdout.readline()
        assert line.startswith(f"shed is serving {shed.data} at {shed.mcp_url}")
    finally:
        again.kill()
        again.wait()


async def run_club_story(client: Any, shed: Shed) -> None:
    listing = await client.call_tool("commands", {})
    listed = ok(listing)
    names = [c["name"] for c in listed["commands"] if c["at"] == "demo/runs"]
    assert names[:3] == ["log_run", "leaderboard", "since"]
    assert (
        f"log_run(who, miles, at) — Log a run for the club leaderboard — Run club, an app at demo.localhost:{shed.port}/runs/"
        in text(listing)
    )
    board_view = next(c for c in listed["commands"] if c["name"] == "leaderboard")
    assert board_view["view"] == "ui://demo/runs/leaderboard.html"

    logged = await client.call_tool(
        "command", {"name": "log_run", "args": {"who": "Ada", "miles": "5", "at": "2026-09-01"}}
    )
    wrote = ok(logged)
    eid = wrote["aliases"]["$run"]
    assert wrote["entities"] == [eid]
    sentence, answer = text(logged).splitlines()
    assert sentence == f"log_run: wrote 1 entity in demo/runs: $run={eid}"
    assert json.loads(answer) == wrote

    board = await client.call_tool("command", {"name": "leaderboard", "args": {}})
    rows = ok(board)["rows"]
    mine = next(r for r in rows if r["entity"]["eid"] == eid)
    assert mine["jog"]["miles"] == 5 and isinstance(mine["jog"]["miles"], (int, float))
    assert mine["jog"]["who"] == "Ada"
    assert mine["created"]["by"]["name"] == "You"
    assert text(board).startswith("leaderboard: ")
    assert json.loads(text(board).splitlines()[1]) == ok(board)

    since_later = ok(await client.call_tool("command", {"name": "since", "args": {"since": "2999-01-01"}}))
    assert since_later["rows"] == []
    since_earlier = ok(await client.call_tool("command", {"name": "since", "args": {"since": "2000-01-01"}}))
    assert eid in [r["entity"]["eid"] for r in since_earlier["rows"]]

    missing = refused(await client.call_tool("command", {"name": "log_run", "args": {"who": "Ada", "at": "2026-09-01"}}))
    assert missing == "miles is required"

    resources = (await client.list_resources()).resources
    views = [r for r in resources if r.uri == "ui://demo/runs/leaderboard.html"]
    assert len(views) == 1
    assert views[0].mime_type == "text/html;profile=mcp-app"
    origin = f"http://demo.localhost:{shed.port}"
    assert views[0].meta["ui"]["csp"] == {"resourceDomains": [origin], "baseUriDomains": [origin]}

    page = (await client.read_resource("ui://demo/runs/leaderboard.html")).contents[0]
    assert page.mime_type == "text/html;profile=mcp-app"
    # A private app's view loads its files through an address keyed for the
    # member who read it, on the app's own origin (a view's frame has no cookie).
    base = re.search(r'<base href="([^"]*)">', page.text).group(1)
    assert re.fullmatch(re.escape(origin) + r"/_shed/view/[0-9a-f]{32}/runs/", base), base
    def demo_get(address: str) -> httpx2.Response:
        # demo.localhost is the loopback address, named in the Host header.
        path = address.removeprefix(origin)
        return httpx2.get(f"http://127.0.0.1:{shed.port}{path}", headers={"Host": f"demo.localhost:{shed.port}"})

    assert demo_get(f"{origin}/runs/style.css").status_code == 401
    style = demo_get(f"{base}style.css")
    assert style.status_code == 200
    assert style.text == (RUN_CLUB / "style.css").read_text()
    assert "Leaderboard" in page.text
    assert page.meta["ui"]["csp"]["baseUriDomains"] == [origin]

    with pytest.raises(MCPError) as unnamed:
        await client.read_resource("ui://demo/runs/index.html")
    assert unnamed.value.error.message == "no resource ui://demo/runs/index.html"

    files = await client.call_tool("app_files", {"app": "demo/runs", "read": ["tools.json"]})
    ok(files)
    assert (RUN_CLUB / "tools.json").read_text().strip() in text(files)


async def test_the_run_club_over_streamable_http(shed: Shed, up: str) -> None:
    async with shed.http("you") as client:
        await run_club_story(client, shed)


async def test_the_run_club_over_a_handshake_session(shed: Shed, up: str) -> None:
    async with shed.http("you", mode="legacy") as client:
        await run_club_story(client, shed)


async def test_the_run_club_over_stdio(shed: Shed, up: str) -> None:
    async with shed.stdio("you") as client:
        await run_club_story(client, shed)


TIME = (
    "a time, like 2026-09-01 or 2026-09-01T10:00:00Z, or now, today or yesterday (the server's clock, UTC)"
)


def utc_today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


async def test_a_run_logged_as_the_readme_asks_lands_today(shed: Shed, up: str) -> None:
    """'Log a 5 mile run for Ada': a model has no date, so the listing says
    what a time takes, a call that leaves `at` out is told, and `today`
    (or `now`) lands as today's date by the server's clock."""
    async with shed.http("you") as client:
        listing = text(await client.call_tool("commands", {}))
        assert f"\nat, since: {TIME}" in listing, listing

        forgot = await client.call_tool("command", {"name": "log_run", "args": {"who": "Ada", "miles": 5}})
        assert refused(forgot) == f"at is required — {TIME}"
        misread = await client.call_tool(
            "command", {"name": "log_run", "args": {"who": "Ada", "miles": 5, "at": "tomorrow"}}
        )
        assert refused(misread) == f"at is {TIME}"

        before = utc_today()
        today = ok(
            await client.call_tool("command", {"name": "log_run", "args": {"who": "Ada", "miles": 5, "at": "today"}})
        )["aliases"]["$run"]
        now = ok(
            await client.call_tool("command", {"name": "log_run", "args": {"who": "Ada", "miles": 3, "at": "now"}})
        )["aliases"]["$run"]
        after = utc_today()

        rows = ok(await client.call_tool("command", {"name": "leaderboard", "args": {}}))["rows"]
        at = {r["entity"]["eid"]: r["jog"]["at"] for r in rows}
        assert at[today] in (f"{before}T00:00:00Z", f"{after}T00:00:00Z"), at
        assert at[now][:10] in (before, after), at
        since = ok(await client.call_tool("command", {"name": "since", "args": {"since": "yesterday"}}))["rows"]
        assert {today, now} <= {r["entity"]["eid"] for r in since}
