"""Approvals, end to end with the real binary: an MCP client without
elicitation asks for a write that needs its person's approval and gets the
address where they approve it (an answer, not an error); the person,
signed in on the web, approves it once (a second click, a reload, another
person, another origin run nothing), denies one, lets one expire; the
client asks again with the approval's id and learns each outcome, and the
space's activity shows each asked, denied and expired (once). The
app's setting "writes by agents need approval" through the CLI and the
app's page.

Expiry is forced by setting the approval's `expires_at` in the past in the
test's own database (sqlite3 on the data folder's file, psql on
PostgreSQL) — no hidden flag."""

from __future__ import annotations

import re
import sqlite3
import subprocess
from typing import Any

import httpx2
import pytest

from conftest import Shed, ok, text

pytestmark = pytest.mark.anyio

RUN = {"name": "log_run", "args": {"who": "Ada", "miles": "3", "at": "2026-09-01"}}


def signed_in(shed: Shed, handle: str) -> str:
    """`handle`'s session cookie on the platform's host, from a `shed login`
    link's button pressed on its own page."""
    key = shed.run("login", handle).stdout.strip().split("?key=", 1)[1]
    pressed = httpx2.post(
        f"{shed.public_url}/_shed/login",
        data={"key": key},
        headers={"Origin": shed.public_url},
        follow_redirects=False,
        timeout=30,
    )
    assert pressed.status_code == 303, pressed.text
    cookies = [value.split(";", 1)[0] for name, value in pressed.headers.multi_items() if name == "set-cookie"]
    return next(cookie for cookie in cookies if cookie.startswith("shed_session="))


def page(shed: Shed, path: str, cookie: str) -> httpx2.Response:
    return httpx2.get(
        f"http://127.0.0.1:{shed.port}{path}",
        headers={"Host": f"localhost:{shed.port}", "Cookie": cookie},
        timeout=30,
    )


def post(shed: Shed, path: str, cookie: str, data: dict[str, str], origin: str | None = None) -> httpx2.Response:
    return httpx2.post(
        f"http://127.0.0.1:{shed.port}{path}",
        data=data,
        headers={"Host": f"localhost:{shed.port}", "Cookie": cookie, "Origin": origin or shed.public_url},
        follow_redirects=False,
        timeout=30,
    )


def landed(shed: Shed, posted: httpx2.Response, cookie: str) -> httpx2.Response:
    """The page a form's 303 goes on to, as a browser sees it: with the
    notice it set (what the form did, shown there once)."""
    assert posted.status_code == 303, posted.text
    notices = [value.split(";", 1)[0] for name, value in posted.headers.multi_items() if name == "set-cookie"]
    sent = "; ".join([cookie, *[n for n in notices if n.startswith("shed_notice=")]])
    return page(shed, posted.headers["location"], sent)


async def runs(shed: Shed) -> int:
    """How many runs ada/runs holds, read by ada (a read never waits)."""
    async with shed.http("ada") as client:
        board = ok(await client.call_tool("command", {"name": "leaderboard", "args": {}}))
    return len(board["rows"])


async def ask(shed: Shed) -> tuple[int, str]:
    """Ada's agent asks to log a run: the approval's id and the answer's text."""
    async with shed.http("ada") as client:
        result = await client.call_tool("command", RUN)
    said = ok(result)
    assert said["state"] == "waiting", said
    return said["approval"], text(result)


async def asked_again(shed: Shed, approval: int) -> tuple[str, str]:
    async with shed.http("ada") as client:
        result = await client.call_tool("command", {"name": "log_run", "approval": approval})
    return ok(result)["state"], text(result).splitlines()[0]


def expire(shed: Shed, approval: int) -> None:
    sql = f"UPDATE approvals SET expires_at = 0 WHERE id = {approval}"
    if shed.database is not None:
        subprocess.run(["psql", shed.database, "-qc", sql], check=True, timeout=60)
    else:
        with sqlite3.connect(shed.data / "shed.db") as db:
            db.execute(sql)


@pytest.fixture
def waiting(two: Shed) -> Shed:
    """The run club of `two`, its writes by agents needing approval (set
    through the CLI)."""
    said = two.run("app", "set", "ada/runs", "--agent-writes-need-approval", "on", "--as", "ada").stdout
    assert said.strip() == "writes by agents to ada/runs now wait for their person's approval"
    return two


async def test_a_client_without_elicitation_gets_the_address_and_an_approval_runs_once(waiting: Shed) -> None:
    shed = waiting
    approval, said = await ask(shed)
    address = f"{shed.public_url}/approvals/{approval}"
    assert said.startswith(
        f'waiting for your approval: log_run with who="Ada", miles="3", at="2026-09-01" in ada/runs — open {address} to approve; then ask me to check'
    ), said
    assert await runs(shed) == 0
    state, said = await asked_again(shed, approval)
    assert state == "waiting", said

    ada = signed_in(shed, "ada")
    listed = page(shed, "/approvals", ada)
    assert listed.status_code == 200
    assert f'data-approval="{approval}"' in listed.text and "log_run" in listed.text
    assert '<span class="badge" aria-label="1 waiting">1</span>' in listed.text
    # Its expiry relative to now, the exact time on hover.
    expiry = re.search(r'expires <time datetime="([^"]+)" title="([^"]+ UTC)">in (59 minutes|1 hour)</time>', listed.text)
    assert expiry, listed.text

    # Another person: as if it did not exist, to look at and to approve.
    bo = signed_in(shed, "bo")
    assert page(shed, f"/approvals/{approval}", bo).status_code == 404
    assert post(shed, f"/approvals/{approval}", bo, {"decision": "approve"}).status_code == 404
    # A form from another origin is not taken.
    elsewhere = post(shed, f"/approvals/{approval}", ada, {"decision": "approve"}, origin="http://evil.example")
    assert elsewhere.status_code == 403
    assert await runs(shed) == 0

    approved = post(shed, f"/approvals/{approval}", ada, {"decision": "approve"})
    assert approved.status_code == 303 and approved.headers["location"] == f"/approvals/{approval}"
    again = post(shed, f"/approvals/{approval}", ada, {"decision": "approve"})
    assert again.status_code == 409, again.text
    assert await runs(shed) == 1
    shown = page(shed, f"/approvals/{approval}", ada)
    assert "Approved — log_run: wrote 1 entity in ada/runs" in shown.text
    assert 'class="badge"' not in shown.text

    state, said = await asked_again(shed, approval)
    assert state == "ran"
    assert said.startswith(f"approval {approval} ran: log_run: wrote 1 entity in ada/runs: $run="), said
    # The write is the agent's, approved by ada.
    activity = shed.run("activity", "--as", "ada").stdout
    assert "approved by @ada" in activity, activity


async def test_denied_and_expired_approvals_run_nothing(waiting: Shed) -> None:
    shed = waiting
    ada = signed_in(shed, "ada")
    denied, _ = await ask(shed)
    assert post(shed, f"/approvals/{denied}", ada, {"decision": "deny"}).status_code == 303
    state, said = await asked_again(shed, denied)
    assert (state, said) == ("denied", f"approval {denied} was denied by @ada: nothing was written")
    # Activity shows the approval asked and denied, beside the calls that did not run.
    shown = page(shed, "/activity", ada).text
    assert "waiting for your approval: log_run with" in shown, shown
    assert f"approval {denied} denied log_run in ada/runs: nothing was written — by @ada" in shown, shown

    expired, _ = await ask(shed)
    expire(shed, expired)
    # Activity shows it expired though nobody touched it since, once,
    # however often (and wherever: the page, the CLI) it is read.
    line = f"approval {expired} for log_run in ada/runs expired before @ada answered: nothing was written"
    assert page(shed, "/activity", ada).text.count(line) == 1, line
    assert page(shed, "/spaces/ada/activity", ada).text.count(line) == 1
    assert post(shed, f"/approvals/{expired}", ada, {"decision": "approve"}).status_code == 409
    state, said = await asked_again(shed, expired)
    assert state == "expired"
    assert said == f"approval {expired} expired before @ada answered: nothing was written — call log_run again to ask anew"
    assert await runs(shed) == 0
    await ask(shed)
    assert page(shed, "/activity", ada).text.count(line) == 1
    assert shed.run("activity", "--as", "ada").stdout.count(line) == 1


async def test_the_setting_on_and_off_through_the_cli_and_the_page(two: Shed) -> None:
    shed = two
    async with shed.http("ada") as client:
        ok(await client.call_tool("command", RUN))
    ada = signed_in(shed, "ada")
    turned = landed(shed, post(shed, "/spaces/ada/apps/runs/approvals", ada, {"need": "on"}), ada)
    assert turned.status_code == 200
    assert "writes by agents to ada/runs now wait for their person&#x27;s approval" in turned.text or "now wait for their person" in turned.text
    await ask(shed)
    turned = landed(shed, post(shed, "/spaces/ada/apps/runs/approvals", ada, {"need": "off"}), ada)
    assert "no longer wait for approval" in turned.text
    async with shed.http("ada") as client:
        ok(await client.call_tool("command", RUN))
    shed.run("app", "set", "ada/runs", "--agent-writes-need-approval", "on", "--as", "ada")
    await ask(shed)
    said = shed.run("app", "set", "ada/runs", "--agent-writes-need-approval", "off", "--as", "ada").stdout
    assert "no longer wait for approval" in said
    async with shed.http("ada") as client:
        ok(await client.call_tool("command", RUN))
    # Bo, no member of ada's space, cannot change it.
    refused = shed.run("app", "set", "ada/runs", "--agent-writes-need-approval", "on", "--as", "bo", check=False)
    assert refused.returncode != 0


def test_a_job_s_write_waits_and_runs_as_the_job_once_approved(shed: Shed) -> None:
    """A job through the broker: the harness reports the write as not landed,
    with the sentence and the address; approved on the page, the row is the
    job's, approved by ada."""
    import json
    import os

    shed.person("ada", "Ada")
    shed.space("ada", "ada")
    from conftest import RUN_CLUB

    shed.deploy(RUN_CLUB, "ada/runs", "ada", "--title", "Run club")
    shed.run("app", "set", "ada/runs", "--agent-writes-need-approval", "on", "--as", "ada")
    queue = shed.data.parent / "q.sock"
    shed.serve("--queue", str(queue))
    job = shed.run("job", "create", "--person", "ada", "--allow", "ada/runs.*").stdout.strip()
    name = json.loads(shed.run("job", "list", "--json").stdout)[-1]["name"]
    (shed.data.parent / "host.json").write_text(
        json.dumps({"cliPath": str(shed.bin), "jobIdEnvVar": "LOOM_COMMAND_JOB_ID", "transport": {"kind": "broker", "queuePath": str(queue)}})
    )
    job_file = shed.data.parent / "job-id"
    job_file.write_text(job)
    job_file.chmod(0o600)
    harness = os.environ.get("SHED_HARNESS_BIN", str(shed.bin.with_name("shed-harness")))
    ran = subprocess.run(
        [
            harness,
            "--loom-commands-config", str(shed.data.parent / "host.json"),
            "--command-job-id-file", str(job_file),
            "--task-slot", "direct-command",
            "tool", "run_command",
            "--input", json.dumps({"command": "ada/runs.log_run", "args": {"who": "Ada", "miles": 3, "at": "2026-09-01"}}),
        ],
        capture_output=True, text=True, timeout=60,
    )
    said = json.loads(ran.stdout)
    assert said["status"] == "awaiting_approval", said
    assert said["landed"] == "no"
    address = said["address"]
    approval = int(address.rsplit("/", 1)[1])
    assert address == f"{shed.public_url}/approvals/{approval}"
    assert said["message"].startswith("waiting for your approval: log_run with"), said
    assert address in said["message"]

    ada = signed_in(shed, "ada")
    listed = page(shed, "/approvals", ada)
    assert f"job {name}" in listed.text
    assert post(shed, f"/approvals/{approval}", ada, {"decision": "approve"}).status_code == 303
    activity = shed.run("activity", "--as", "ada").stdout
    assert f"agent:{name}" in activity, activity
    # The activity page names the client beside the job: approved by ada.
    shown = page(shed, "/activity", ada).text
    assert f"client {name}, approved by @ada" in shown, shown


async def test_a_client_with_elicitation_asks_the_person_in_the_client(waiting: Shed) -> None:
    """Session-ful (2025-11-25): the call asks in form mode — the command,
    its app, its arguments as they will run —; approve runs it once,
    attributed to the client and approved; decline runs nothing."""
    from mcp import types

    shed = waiting
    asked: list[Any] = []

    def answering(action: str) -> Any:
        async def callback(context: Any, params: Any) -> Any:
            asked.append(params)
            content = {"approve": True} if action == "accept" else None
            return types.ElicitResult(action=action, content=content)

        return callback

    async with shed.http("ada", mode="legacy", elicitation_callback=answering("accept")) as client:
        result = await client.call_tool("command", RUN)
    said = ok(result)
    assert said["state"] == "ran", text(result)
    assert text(result).startswith(f"approval {said['approval']} ran: log_run: wrote 1 entity in ada/runs"), text(result)
    message = asked[0].message
    assert "log_run in ada/runs" in message and '"who": "Ada"' in message and '"miles": "3"' in message, message
    assert await runs(shed) == 1
    ada = signed_in(shed, "ada")
    assert "approved by @ada" in page(shed, "/activity", ada).text

    async with shed.http("ada", mode="legacy", elicitation_callback=answering("decline")) as client:
        result = await client.call_tool("command", RUN)
    said = ok(result)
    assert said["state"] == "denied"
    assert text(result).splitlines()[0] == f"approval {said['approval']} was denied by @ada: nothing was written"
    async with shed.http("ada", mode="legacy", elicitation_callback=answering("cancel")) as client:
        result = await client.call_tool("command", RUN)
    assert ok(result)["state"] == "denied"
    assert await runs(shed) == 1


def stateless(shed: Shed, params: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """One 2026-07-28 `tools/call` as ada (no session), its JSON-RPC result."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": capabilities}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    answer = httpx2.post(
        f"http://127.0.0.1:{shed.port}/mcp",
        json=body,
        headers={
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Host": f"localhost:{shed.port}",
            "Mcp-Method": "tools/call",
            "Mcp-Name": params["name"],
            "Authorization": f"Bearer {shed.token('ada')}",
        },
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


async def test_a_2026_07_28_client_answers_input_required_once(waiting: Shed) -> None:
    """input_required with a signed requestState; the retry with
    inputResponses runs it once; replayed, tampered or for other arguments,
    refused and nothing runs."""
    shed = waiting
    form = {"elicitation": {"form": {}}}
    call = {"name": "command", "arguments": RUN}

    asked = stateless(shed, call, form)
    assert asked["resultType"] == "input_required", asked
    request = asked["inputRequests"]["approval"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    assert "log_run in ada/runs" in request["params"]["message"] and '"who": "Ada"' in request["params"]["message"]
    state = asked["requestState"]
    yes = {"approval": {"action": "accept", "content": {"approve": True}}}

    tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    refused = stateless(shed, {**call, "inputResponses": yes, "requestState": tampered}, form)
    assert refused["isError"] and refused["content"][0]["text"].startswith("the requestState is not one shed made"), refused
    other = {"name": "command", "arguments": {**RUN, "args": {**RUN["args"], "miles": "30"}}}
    refused = stateless(shed, {**other, "inputResponses": yes, "requestState": state}, form)
    assert refused["isError"] and "other arguments" in refused["content"][0]["text"], refused
    assert await runs(shed) == 0

    ran = stateless(shed, {**call, "inputResponses": yes, "requestState": state}, form)
    assert not ran.get("isError"), ran
    assert ran["structuredContent"]["state"] == "ran", ran
    assert await runs(shed) == 1
    replayed = stateless(shed, {**call, "inputResponses": yes, "requestState": state}, form)
    assert replayed["isError"] and replayed["content"][0]["text"].startswith("the requestState was answered already"), replayed
    assert await runs(shed) == 1

    declined = stateless(shed, call, form)
    no = {"approval": {"action": "decline"}}
    answered = stateless(shed, {**call, "inputResponses": no, "requestState": declined["requestState"]}, form)
    assert answered["structuredContent"]["state"] == "denied", answered
    assert await runs(shed) == 1

    # A client that declares no elicitation gets the address, as before.
    plain = stateless(shed, call, {})
    assert plain["structuredContent"]["state"] == "waiting", plain
