"""Who may do what, through the MCP door: private, public and open apps ×
their space's owner, an editor, a viewer, a person of another space and a
signed-out client × a read command and a write command. Every cell's outcome
is asserted, and every row written names its writer in `created.by`. Signed
out, every call is an HTTP 401 naming the OAuth metadata (an SDK client
starts its sign-in there), before the rule book is asked."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from conftest import RUN_CLUB, Shed, ok, refused, unauthorized

pytestmark = pytest.mark.anyio

SIGN_IN_TO_MCP = (
    "sign in first — this MCP server signs clients in with OAuth (its metadata is named in WWW-Authenticate), "
    "or takes a bearer token from `shed token create <handle>`"
)
VIEWER = "you can read this app but not change it — its owner can make you an editor"

PEOPLE = {"owner": ("olive", "Olive"), "editor": ("ed", "Ed"), "viewer": ("vi", "Vi"), "non-member": ("otto", "Otto")}
ACCESS = ["private", "public", "open"]
WHO = ["owner", "editor", "viewer", "non-member", "signed out"]

# (access, who) → (outcome of the read, outcome of the write)
OK, VIEWER_REFUSED, SIGN_IN_FIRST, OUT_OF_REACH = "ok", "viewer", "sign in", "out of reach"
EXPECTED = {
    ("private", "owner"): (OK, OK),
    ("private", "editor"): (OK, OK),
    ("private", "viewer"): (OK, VIEWER_REFUSED),
    ("private", "non-member"): (OUT_OF_REACH, OUT_OF_REACH),
    ("private", "signed out"): (SIGN_IN_FIRST, SIGN_IN_FIRST),
    ("public", "owner"): (OK, OK),
    ("public", "editor"): (OK, OK),
    ("public", "viewer"): (OK, VIEWER_REFUSED),
    # a public app of a space they are not in is reachable on the web, not here
    ("public", "non-member"): (OUT_OF_REACH, OUT_OF_REACH),
    ("public", "signed out"): (SIGN_IN_FIRST, SIGN_IN_FIRST),
    ("open", "owner"): (OK, OK),
    ("open", "editor"): (OK, OK),
    # open: anyone who can reach it writes — a viewer reaches it
    ("open", "viewer"): (OK, OK),
    ("open", "non-member"): (OUT_OF_REACH, OUT_OF_REACH),
    ("open", "signed out"): (SIGN_IN_FIRST, SIGN_IN_FIRST),
}


def check(outcome: str, result: Any, app: str, command: str) -> None:
    if outcome == OK:
        ok(result)
    elif outcome == VIEWER_REFUSED:
        assert refused(result) == VIEWER
    else:
        # the app is not among theirs: the same sentence as an app that does not exist
        assert refused(result).startswith(f"no app {app} in your spaces — "), command


@pytest.fixture
def club(shed: Shed) -> Shed:
    for handle, name in PEOPLE.values():
        shed.person(handle, name)
    shed.space("club", "olive")
    shed.space("elsewhere", "otto")
    shed.member("club", "ed", "editor")
    shed.member("club", "vi", "viewer")
    for access in ACCESS:
        shed.deploy(RUN_CLUB, f"club/{access}", "olive", "--access", access, "--title", f"{access} runs")
    shed.serve()
    return shed


async def test_the_access_matrix(club: Shed) -> None:
    writers: dict[str, set[str]] = {access: set() for access in ACCESS}
    for who in WHO:
        if who not in PEOPLE:
            for access in ACCESS:
                assert EXPECTED[(access, who)] == (SIGN_IN_FIRST, SIGN_IN_FIRST)
                for command in ("leaderboard", "log_run"):
                    call = {"name": "command", "arguments": {"name": command, "app": f"club/{access}"}}
                    assert "invalid_token" not in unauthorized(club, "tools/call", call)
            continue
        handle = PEOPLE[who][0]
        async with club.http(handle) as client:
            for access in ACCESS:
                app = f"club/{access}"
                read_expected, write_expected = EXPECTED[(access, who)]
                read = await client.call_tool("command", {"name": "leaderboard", "args": {}, "app": app})
                check(read_expected, read, app, "leaderboard")
                write = await client.call_tool(
                    "command",
                    {"name": "log_run", "args": {"who": who, "miles": 3, "at": "2026-09-01"}, "app": app},
                )
                check(write_expected, write, app, "log_run")
                if write_expected == OK:
                    writers[access].add(PEOPLE[who][1])

    async with club.http("olive") as owner:
        for access in ACCESS:
            rows = ok(await owner.call_tool("command", {"name": "leaderboard", "app": f"club/{access}"}))["rows"]
            assert {row["created"]["by"]["name"] for row in rows} == writers[access]
            assert len(rows) == len(writers[access])


async def test_a_wrong_token_is_told_to_sign_in(club: Shed) -> None:
    for method, params in [("initialize", {}), ("tools/call", {"name": "commands", "arguments": {}})]:
        challenge = unauthorized(club, method, params, token="shed_not_a_token")
        assert 'error="invalid_token"' in challenge and "sign in first" in challenge, challenge


async def test_a_401_carries_shed_sentence_as_a_json_rpc_error(club: Shed) -> None:
    """Beside the challenge, the 401's body is a JSON-RPC error holding shed's
    sentence, which an SDK client shows as the call's error."""
    wrong = "sign in first — that token is not one this host knows, or it was revoked"
    for token, sentence in [("shed_not_a_token", wrong), (None, SIGN_IN_TO_MCP)]:
        call = {"name": "command", "arguments": {"name": "leaderboard", "app": "club/open"}}
        headers = {"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        answer = httpx2.post(
            club.mcp_url,
            json={"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call},
            headers=headers,
            timeout=30,
        )
        assert answer.status_code == 401
        assert answer.headers["content-type"] == "application/json"
        said = answer.json()
        assert said["error"]["message"].startswith(sentence), said
        assert said == {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": said["error"]["message"]}}
        assert unauthorized(club, "tools/call", call, token=token)
    with pytest.raises(BaseException) as refused:
        async with club.http(token="shed_not_a_token") as client:
            await client.list_tools()
    assert wrong in str(refused.value) or wrong in repr(refused.value), repr(refused.value)


async def test_the_views_a_person_reaches_are_the_apps_of_their_spaces(club: Shed) -> None:
    async with club.http("vi") as viewer:
        uris = sorted(r.uri for r in (await viewer.list_resources()).resources)
        assert uris == [f"ui://club/{access}/leaderboard.html" for access in sorted(ACCESS)]
    async with club.http("otto") as outsider:
        assert (await outsider.list_resources()).resources == []
        with pytest.raises(Exception) as unreachable:
            await outsider.read_resource("ui://club/public/leaderboard.html")
        assert "no resource ui://club/public/leaderboard.html" in str(unreachable.value)
