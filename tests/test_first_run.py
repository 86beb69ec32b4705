"""The README's first section ("What `shed up` does"), followed literally in
an empty folder: `shed up`; the one-time sign-in link it prints, opened in
chromium with "Sign in" pressed, lands signed in on the home page; the MCP
configuration it prints (the URL and the bearer token) is what the official
SDK client connects with, and "log a 5 mile run for Ada" is `commands`, then
`command` with log_run; the run shows on the app's page and in the
`leaderboard` answer's text."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import REPO, free_port, ok, text

pytestmark = pytest.mark.anyio

BROWSER = REPO / "tests" / "browser"

# What `shed up` may take to start serving on a loaded machine.
START_SECONDS = 30


def look(link: str, page: str, words: str) -> dict[str, str]:
    """A person's look in chromium (tests/browser/sign-in-and-look.mjs):
    `link` opened and "Sign in" pressed, then `page` until it shows `words`."""
    if shutil.which("node") is None or not (BROWSER / "node_modules").exists():
        pytest.fail("the browser step needs node and tests/browser/node_modules — run tests/browser/install.sh")
    done = subprocess.run(
        ["node", "sign-in-and-look.mjs", link, page, words],
        cwd=BROWSER,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"the browser step failed: {done.stderr}{done.stdout}"
    return json.loads(done.stdout.strip().splitlines()[-1])


async def test_the_readme_s_first_section_in_an_empty_folder(shed_bin: Path, tmp_path: Path) -> None:
    # An empty folder and no shed variables, as a newcomer has; a free port
    # (`--port`) rather than 7700, which another shed on this machine may hold.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHED_")}
    env["RUST_LOG"] = "warn"
    port = free_port()
    up = subprocess.Popen(
        [str(shed_bin), "up", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert up.stdout is not None
        printed = []
        for line in up.stdout:
            printed.append(line)
            if line.startswith("Then ask your agent"):
                break
        welcome = "".join(printed)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"shed up did not start serving: {welcome}"
                time.sleep(0.05)
        assert (tmp_path / "shed-data").is_dir(), welcome
        said = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in printed) if value}
        sign_in, app = said["Sign in"], said["The app"]
        config = json.loads(welcome[welcome.index("{") : welcome.index("\n}\n") + 2])
        server = config["mcpServers"]["shed"]

        # The configuration, as an MCP client takes it; the agent asked to
        # "log a 5 mile run for Ada" finds log_run with `commands`, runs it
        # with `command`, and reads the board.
        async with httpx2.AsyncClient(headers=server["headers"], timeout=30) as http_client:
            async with Client(streamable_http_client(server["url"], http_client=http_client)) as client:
                listing = await client.call_tool("commands", {})
                assert "log_run(" in text(listing), text(listing)
                logged = await client.call_tool(
                    "command", {"name": "log_run", "args": {"who": "Ada", "miles": 5, "at": "today"}}
                )
                ok(logged)
                board = await client.call_tool("command", {"name": "leaderboard", "args": {}})
                assert ok(board)["rows"][0]["jog"]["who"] == "Ada"
                assert "Ada" in text(board), text(board)

        # The sign-in link, then the app's page, in a browser.
        seen = look(sign_in, app, "Ada — 5 miles")
        assert seen["greeting"].startswith("You are signed in as @you."), seen
        assert seen["landed"] == f"http://localhost:{port}/", seen
        assert "Ada — 5 miles · logged by You" in seen["text"], seen
    finally:
        up.kill()
        up.wait()
