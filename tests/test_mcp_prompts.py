"""MCP prompts through the official SDK client: a prompt per app in reach
(`<space>/<app>`) and a `tour` of the caller's spaces, their texts, the
completion of their arguments, and `notifications/prompts/list_changed` when a
deploy or a new membership moves a session's prompts — while the tool list
never moves."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.types import PromptReference

from conftest import RUN_CLUB, Heard, Shed, unauthorized

pytestmark = pytest.mark.anyio


def message_text(prompt: Any) -> str:
    [message] = prompt.messages
    assert message.role == "user"
    return message.content.text


async def test_a_person_has_a_prompt_per_app_in_reach_and_a_tour(two: Shed) -> None:
    async with two.http("ada") as client:
        listed = (await client.list_prompts()).prompts
        assert [(p.name, p.title) for p in listed] == [("ada/runs", "Run club"), ("tour", "A tour of your spaces")]
        runs = listed[0]
        assert runs.description == "Run club: what ada/runs is for, its 5 commands and how to call them"
        assert [(a.name, a.required) for a in runs.arguments or []] == [("command", False)]

        text = message_text(await client.get_prompt("ada/runs"))
        assert text.startswith(
            f"Run club (ada/runs) is a private app of the space ada, at http://ada.localhost:{two.port}/runs/, v1. "
            "It keeps jog (who, miles, at)."
        )
        for shape in ("- log_run(who, miles, at) — ", "- leaderboard() — ", "- find_jog("):
            assert shape in text
        assert '`command` with its name, its arguments as `args` and the app, e.g. {"name":"log_run"' in text

        focused = message_text(await client.get_prompt("ada/runs", {"command": "log_run"}))
        assert "I want to use its command log_run(who, miles, at) — " in focused
        # A number is written as a number, as the call must send it.
        assert '{"name":"log_run","args":{"who":"<who>","miles":3,"at":"<at>"},"app":"ada/runs"}' in focused

        tour = message_text(await client.get_prompt("tour"))
        assert tour.startswith("Show me (Ada, @ada) around my spaces on shed")
        assert "## ada — I am an owner here" in tour
        assert "- ada/runs — Run club, private, " in tour
        assert "commands: log_run, leaderboard, since, add_jog, find_jog" in tour


async def test_the_prompts_follow_reach_and_refuse_with_a_sentence(two: Shed) -> None:
    async with two.http("bo") as client:
        assert [p.name for p in (await client.list_prompts()).prompts] == ["tour"]
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("ada/runs")
        assert str(refused.value) == "no prompt ada/runs — your prompts are tour"
        tour = message_text(await client.get_prompt("tour"))
        assert "## bo — I am an owner here\nno apps yet — app_deploy makes one" in tour
        assert "ada/runs" not in tour
    async with two.http("ada") as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("ada/runs", {"command": "log_walk"})
        assert str(refused.value) == (
            "no command log_walk in ada/runs — its commands are log_run, leaderboard, since, add_jog, find_jog"
        )
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("tour", {"app": "runs"})
        assert str(refused.value) == "the prompt tour takes no argument app — it takes space"
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("tour", {"space": "bo"})
        assert str(refused.value) == "no space bo of yours — your spaces are ada"
    async with two.http() as client:
        assert (await client.list_prompts()).prompts == []
    assert "invalid_token" not in unauthorized(two, "prompts/get", {"name": "tour"})


async def test_a_prompt_s_arguments_complete(two: Shed) -> None:
    two.space("club", "ada")
    async with two.http("ada") as client:
        commands = await client.complete(PromptReference(name="ada/runs"), {"name": "command", "value": "l"})
        assert commands.completion.values == ["log_run", "leaderboard"]
        assert commands.completion.total == 2
        assert commands.completion.has_more is False
        every = await client.complete(PromptReference(name="ada/runs"), {"name": "command", "value": ""})
        assert every.completion.values == ["log_run", "leaderboard", "since", "add_jog", "find_jog"]
        spaces = await client.complete(PromptReference(name="tour"), {"name": "space", "value": "c"})
        assert spaces.completion.values == ["club"]
        with pytest.raises(MCPError) as refused:
            await client.complete(PromptReference(name="bo/runs"), {"name": "command", "value": ""})
        assert str(refused.value).startswith("no prompt bo/runs — your prompts are ")


async def test_a_deploy_into_reach_tells_a_session_its_prompts_changed_and_the_tools_stay(two: Shed) -> None:
    handler = Heard()
    heard = handler.methods
    async with two.http("bo", mode="legacy", message_handler=handler) as client:
        tools_before = (await client.list_tools()).model_dump_json()
        assert [p.name for p in (await client.list_prompts()).prompts] == ["tour"]
        await anyio.sleep(0.3)
        two.deploy(RUN_CLUB, "ada/other", "ada", "--title", "Not Bo's")  # not in Bo's reach
        await anyio.sleep(1.5)
        assert "notifications/prompts/list_changed" not in heard
        two.deploy(RUN_CLUB, "bo/runs", "bo", "--title", "Bo's runs")
        await handler.until("notifications/prompts/list_changed")
        prompts = (await client.list_prompts(cache_mode="bypass")).prompts
        assert [p.name for p in prompts] == ["bo/runs", "tour"]
        assert (await client.list_tools(cache_mode="bypass")).model_dump_json() == tools_before
        assert "notifications/tools/list_changed" not in heard


async def test_joining_a_space_tells_a_session_its_prompts_and_views_changed(two: Shed) -> None:
    handler = Heard()
    async with two.http("bo", mode="legacy", message_handler=handler) as client:
        assert [p.name for p in (await client.list_prompts()).prompts] == ["tour"]
        await anyio.sleep(0.3)
        two.member("ada", "bo", "viewer")  # by another process, as an owner would
        await handler.until("notifications/prompts/list_changed", "notifications/resources/list_changed")
        prompts = (await client.list_prompts(cache_mode="bypass")).prompts
        assert [p.name for p in prompts] == ["ada/runs", "tour"]
        tour = (await client.get_prompt("tour")).messages[0].content.text
        assert "## ada — I am a viewer here" in tour


async def test_a_listening_client_hears_its_prompts_changed(two: Shed) -> None:
    async with two.http("bo") as client:
        async with client.listen(prompts_list_changed=True) as subscription:
            # The server reads the prompts it compares against as the stream
            # opens; a round trip first lets it, so the deploy comes after.
            assert [p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts] == ["tour"]
            two.deploy(RUN_CLUB, "bo/runs", "bo", "--title", "Bo's runs")
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert type(event).__name__ == "PromptsListChanged"
        assert [p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts] == ["bo/runs", "tour"]
