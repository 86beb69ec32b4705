"""Operating a real `shed serve` with the official SDK client connected.

Stopping: Ctrl-C (SIGINT) while a client holds an idle stream open — a
legacy session's GET stream, or a 2026-07-28 `subscriptions/listen` — stops
shed at once (well below its 10 s drain bound), exit 0, and the last line says
no call was in flight; a call in flight is waited for, and a second SIGINT
stops at once.

Logs at the default level: one line when an SDK session opens and one when
it closes, naming the client and the person, and none of rmcp's Rust `Debug`
structures.
"""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

import anyio
import pytest
from mcp.types import Implementation

from conftest import RUN_CLUB, Shed

pytestmark = pytest.mark.anyio

# How long a stop with nothing to wait for may take: generous for a loaded
# two-core machine, and well below the 10 s drain bound the defect waited.
STOP_BOUND = 5.0

# How long the tests wait for shed to exit at all, whatever happens.
EXIT_BOUND = 30.0


@pytest.fixture
def served(shed: Shed, tmp_path: Path) -> Shed:
    """Ada, who owns the space `ada` with the run club at ada/runs; served at
    the default log level, its output in `tmp_path / "shed.out"`."""
    shed.person("ada", "Ada")
    shed.space("ada", "ada")
    shed.deploy(RUN_CLUB, "ada/runs", "ada", "--title", "Run club")
    shed.serve(output=tmp_path / "shed.out", env={"RUST_LOG": None})
    return shed


def output(tmp_path: Path) -> str:
    return (tmp_path / "shed.out").read_text()


def stopped(tmp_path: Path) -> str:
    """The one line saying shed stopped, and what it waited for."""
    lines = [line for line in output(tmp_path).splitlines() if "shed stopped" in line]
    assert len(lines) == 1, output(tmp_path)
    return lines[0]


async def exits(shed: Shed, within: float) -> float:
    """Waits for shed to exit, at most `within` seconds: how long it took.
    It must exit with status 0."""
    assert shed.process is not None
    started = time.monotonic()
    while shed.process.poll() is None:
        assert time.monotonic() - started < within, f"shed did not exit within {within} s"
        await anyio.sleep(0.02)
    assert shed.process.returncode == 0
    return time.monotonic() - started


def interrupt(shed: Shed) -> None:
    assert shed.process is not None
    shed.process.send_signal(signal.SIGINT)


async def test_ctrl_c_with_an_idle_sdk_session_stops_at_once(served: Shed, tmp_path: Path) -> None:
    async with served.http("ada", mode="legacy") as client:
        assert len((await client.list_tools()).tools) == 7
        await anyio.sleep(0.5)  # the session's GET stream is open, idle
        interrupt(served)
        took = await exits(served, EXIT_BOUND)
    assert took < STOP_BOUND, f"shed took {took:.1f} s to stop with an idle session open:\n{output(tmp_path)}"
    assert "no calls in flight" in stopped(tmp_path)


async def test_ctrl_c_with_an_idle_listen_stream_stops_at_once(served: Shed, tmp_path: Path) -> None:
    async with served.http("ada") as client:
        async with client.listen(tools_list_changed=True):
            await anyio.sleep(0.5)
            interrupt(served)
            took = await exits(served, EXIT_BOUND)
    assert took < STOP_BOUND, f"shed took {took:.1f} s to stop with a listen stream open:\n{output(tmp_path)}"
    assert "no calls in flight" in stopped(tmp_path)


async def test_a_second_ctrl_c_stops_a_drain_at_once(served: Shed, tmp_path: Path) -> None:
    # A call in flight: a tools/call whose body has not all arrived.
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spaces","arguments":{}}}'
    head = (
        "POST /mcp HTTP/1.1\r\n"
        f"Host: localhost:{served.port}\r\n"
        f"Authorization: Bearer {served.token('ada')}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        "Mcp-Protocol-Version: 2026-07-28\r\n"
        "Mcp-Method: tools/call\r\n"
        "Mcp-Name: spaces\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", served.port), timeout=EXIT_BOUND) as slow:
        slow.sendall(head + body[:10])
        await anyio.sleep(1.0)  # the server has read the head: the call is in flight
        interrupt(served)
        await anyio.sleep(1.0)
        assert served.process is not None and served.process.poll() is None, (
            f"shed did not wait for the call in flight:\n{output(tmp_path)}"
        )
        interrupt(served)
        took = await exits(served, EXIT_BOUND)
    assert took < STOP_BOUND, f"a second SIGINT took {took:.1f} s to stop shed:\n{output(tmp_path)}"
    assert "for 1 call in flight, and cut the 1 call still running when asked again" in stopped(tmp_path)


async def test_an_sdk_session_logs_one_line_as_it_opens_and_one_as_it_closes(served: Shed, tmp_path: Path) -> None:
    client_info = Implementation(name="run-club-notebook", version="1.0")
    async with served.http("ada", mode="legacy", client_info=client_info) as client:
        assert len((await client.list_tools()).tools) == 7
        await client.call_tool("spaces", {})
    # And a client of the sessionless protocol: no session, no session lines.
    async with served.http("ada") as client:
        await client.call_tool("spaces", {})
    with anyio.fail_after(10):
        while "MCP session closed" not in output(tmp_path):
            await anyio.sleep(0.05)
    served.process.send_signal(signal.SIGTERM)
    await exits(served, EXIT_BOUND)
    logged = output(tmp_path)
    opened = [line for line in logged.splitlines() if "MCP session opened" in line]
    closed = [line for line in logged.splitlines() if "MCP session closed" in line]
    assert len(opened) == 1 and len(closed) == 1, logged
    for line in opened + closed:
        assert "run-club-notebook" in line and "ada" in line, line
    for debug in ("InitializeRequestParams", "Some(", "Implementation {"):
        assert debug not in logged, f"a Rust Debug structure at the default level ({debug}):\n{logged}"
