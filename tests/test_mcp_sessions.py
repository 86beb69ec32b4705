"""An MCP session's end as the official SDK client lives it: closing the
client ends the session with a DELETE the SDK takes as done (200 or 204,
no "Session termination failed" warning), and the session is gone — a
request on its old id is refused."""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import pytest

from conftest import Shed, ok

pytestmark = pytest.mark.anyio


async def test_closing_a_session_ends_it_without_a_warning(two: Shed, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp")
    answered: list[tuple[str, int, str | None]] = []

    async def heard(response: httpx2.Response) -> None:
        session = response.request.headers.get("mcp-session-id") or response.headers.get("mcp-session-id")
        answered.append((response.request.method, response.status_code, session))

    # A client on the 2025-11-25 protocol (the SDK's legacy mode) holds a
    # session and ends it with a DELETE; a 2026-07-28 client holds none.
    async with two.http("ada", mode="legacy", event_hooks={"response": [heard]}) as client:
        ok(await client.call_tool("spaces", {}))

    sessions = {session for _, _, session in answered if session}
    assert len(sessions) == 1, answered
    session = sessions.pop()
    deletes = [status for method, status, _ in answered if method == "DELETE"]
    assert deletes and all(status in (200, 204) for status in deletes), answered
    warnings = [r.getMessage() for r in caplog.records if "Session termination failed" in r.getMessage()]
    assert warnings == []

    # The session is really gone: a request on its old id is refused.
    again = httpx2.post(
        two.mcp_url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {two.token('ada')}",
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": "2025-11-25",
        },
        timeout=30,
    )
    assert again.status_code == 404, f"{again.status_code}: {again.text}"
