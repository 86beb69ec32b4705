"""An app rolled back and put in the trash, seen through the official SDK
client: a roll back (`shed app rollback`, by another process) is a new
deploy of an earlier version's files, so a session that reaches its views
hears `notifications/resources/list_changed`, `commands` answers the old
version's commands, and the tool list stays the same bytes; a trash takes
its views and commands away (and says so), a restore brings them back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import RUN_CLUB, Heard, Shed, ok, refused

pytestmark = pytest.mark.anyio

RESOURCES_CHANGED = "notifications/resources/list_changed"


def without_views_or_since(tmp_path: Path) -> Path:
    """The run club with no `since` and no views: its version 2."""
    folder = tmp_path / "v2"
    shutil.copytree(RUN_CLUB, folder)
    tools = json.loads((folder / "tools.json").read_text())
    del tools["since"]
    for entry in tools.values():
        entry.pop("view", None)
    (folder / "tools.json").write_text(json.dumps(tools))
    return folder


async def command_names(client: Any) -> list[str]:
    listed = ok(await client.call_tool("commands", {"app": "ada/runs"}))
    return [row["name"] for row in listed["commands"]]


async def test_a_rollback_moves_the_views_and_commands_and_never_the_tools(two: Shed, tmp_path: Path) -> None:
    two.deploy(without_views_or_since(tmp_path), "ada/runs", "ada")
    heard = Heard()
    async with two.http("ada", mode="legacy", message_handler=heard) as client:
        tools_before = (await client.list_tools()).model_dump_json()
        assert (await client.list_resources()).resources == []
        assert "since" not in await command_names(client)
        await anyio.sleep(0.3)

        said = two.run("app", "rollback", "ada/runs", "1", "--as", "ada").stdout
        assert said.startswith("rolled ada/runs back to v1: now v3, at "), said
        await heard.until(RESOURCES_CHANGED)
        views = (await client.list_resources()).resources
        assert [str(view.uri) for view in views] == ["ui://ada/runs/leaderboard.html"]
        assert await command_names(client) == ["log_run", "leaderboard", "since", "add_jog", "find_jog"]
        assert (await client.list_tools(cache_mode="bypass")).model_dump_json() == tools_before

        two.run("app", "trash", "ada/runs", "--as", "ada")
        await heard.until(RESOURCES_CHANGED)
        assert (await client.list_resources()).resources == []
        listed = ok(await client.call_tool("commands", {}))
        assert listed["commands"] == []
        sentence = refused(await client.call_tool("commands", {"app": "ada/runs"}))
        assert sentence == (
            "ada/runs is in the trash — an owner or an editor of ada can restore it "
            f"(with Restore on its page, {two.public_url}/spaces/ada/apps/runs)"
        )
        assert (await client.list_tools(cache_mode="bypass")).model_dump_json() == tools_before

        two.run("app", "restore", "ada/runs", "--as", "ada")
        await heard.until(RESOURCES_CHANGED)
        assert [str(view.uri) for view in (await client.list_resources()).resources] == [
            "ui://ada/runs/leaderboard.html"
        ]
        assert "since" in await command_names(client)
        assert "notifications/tools/list_changed" not in heard.methods
