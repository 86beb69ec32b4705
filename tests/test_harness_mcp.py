"""`shed-harness mcp` driven by the official MCP Python SDK client.

The harness is served over stdio against the fake host CLI of the harness's
test suite (`shed-harness-fake-host`), which answers from a fixture directory
and records every invocation there.
"""

import asyncio
import json
import os
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
HARNESS = Path(os.environ.get("SHED_HARNESS_BIN", REPO / "target" / "debug" / "shed-harness"))
FAKE_HOST = Path(
    os.environ.get("SHED_HARNESS_FAKE_HOST_BIN", HARNESS.parent / "shed-harness-fake-host")
)


def make_host(tmp_path: Path) -> Path:
    queue = tmp_path / "queue"
    (queue / "outcomes").mkdir(parents=True)
    rows = [
        {
            "name": "jeff/runs.log_run",
            "title": "Log a run.",
            "description": "Adds a run to the log.",
            "inputSchema": {
                "type": "object",
                "properties": {"miles": {"type": "number"}},
                "required": ["miles"],
            },
            "outputs": {"entities": {}, "version": {}},
            "effect": "write",
            "scope": "app",
            "readOnlyGranted": False,
        },
        {"name": "hidden.dev", "developer": True},
    ]
    (queue / "listing.json").write_text(json.dumps({"commands": rows}))
    config = tmp_path / "host.json"
    config.write_text(
        json.dumps(
            {
                "cliPath": str(FAKE_HOST),
                "jobIdEnvVar": "LOOM_COMMAND_JOB_ID",
                "transport": {"kind": "broker", "queuePath": str(queue)},
            }
        )
    )
    return config


async def session_run(config: Path, body, extra=()):
    # The job id in a file only its owner may read, as the harness requires.
    job = config.parent / "job-id"
    job.write_text("job-9\n")
    job.chmod(0o600)
    params = StdioServerParameters(
        command=str(HARNESS),
        args=["--loom-commands-config", str(config), "--command-job-id-file", str(job), *extra, "mcp"],
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def test_tools_list_offers_the_three_command_tools(tmp_path):
    config = make_host(tmp_path)

    async def body(session):
        return await session.list_tools()

    listed = asyncio.run(session_run(config, body))
    names = [tool.name for tool in listed.tools]
    assert names == ["list_commands", "run_command", "run_read_command"]


def test_allow_tool_narrows_the_list(tmp_path):
    config = make_host(tmp_path)

    async def body(session):
        return await session.list_tools()

    listed = asyncio.run(session_run(config, body, ["--allow-tool", "list_commands"]))
    assert [tool.name for tool in listed.tools] == ["list_commands"]


def test_tools_call_lists_and_runs_through_the_host(tmp_path):
    config = make_host(tmp_path)

    async def body(session):
        listing = await session.call_tool("list_commands", {})
        ran = await session.call_tool(
            "run_command", {"command": "jeff/runs.log_run", "args": {"miles": 5}, "loomId": "jeff/runs"}
        )
        unknown = await session.call_tool("run_command", {"command": "log_run"})
        return listing, ran, unknown

    # The person typed the task: a run writes only so.
    listing, ran, unknown = asyncio.run(session_run(config, body, ["--task-slot", "direct-command"]))
    listed = listing.structured_content
    assert listed["hidden"] == 1
    assert listed["entries"][0]["signature"] == (
        "jeff/runs.log_run(miles: number) -> {entities, version}  [write, app]"
    )
    assert json.loads(listing.content[0].text) == listed
    assert ran.structured_content["status"] == "executed"
    assert ran.structured_content["entry"]["body"]["args"] == {"miles": 5}
    assert unknown.structured_content["status"] == "unknown_command"
    assert unknown.structured_content["suggestions"][0] == "jeff/runs.log_run"

    lines = (tmp_path / "queue" / "invocations.jsonl").read_text().splitlines()
    runs = [json.loads(line) for line in lines if json.loads(line)["argv"][1] == "run"]
    assert len(runs) == 1
    assert runs[0]["argv"][-1] == "--loom=jeff/runs"
    assert sorted(runs[0]["env"]) == ["LOOM_COMMAND_JOB_ID", "LOOM_PAGE_RPC_QUEUE", "PATH"]
    assert runs[0]["env"]["LOOM_COMMAND_JOB_ID"] == "job-9"


def test_policy_refuses_a_write_for_a_context_task(tmp_path):
    config = make_host(tmp_path)

    async def body(session):
        return await session.call_tool("run_command", {"command": "jeff/runs.log_run", "args": {"miles": 1}})

    refused = asyncio.run(session_run(config, body, ["--task-slot", "context"]))
    assert refused.structured_content["status"] == "refused_by_policy"
    assert not (tmp_path / "queue" / "invocations.jsonl").exists()
