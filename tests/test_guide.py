"""The guide to writing an app (docs/apps.md) and the example apps, black-box:
every app in examples/ deploys; the reading list's pages say their language
and have a main landmark; the README's first screen points to the guide; and
what the guide shows is run, in order, against a real `shed up` — its shell
lines, its MCP calls and its page's reads and writes — each answer checked
against the output the guide prints beside it, so the guide cannot drift
from what shed does. How the guide marks what is run is said in its opening
comment, and read here by `guide_blocks`."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import REPO, Shed, text

pytestmark = pytest.mark.anyio

GUIDE = REPO / "docs" / "apps.md"
EXAMPLES = REPO / "examples"
READING_LIST = EXAMPLES / "reading-list"

# The port the guide's addresses name; the test's own replaces it.
GUIDE_PORT = "7700"


@dataclass
class Block:
    """A fenced block of the guide: its language, its `key=value` (or bare
    `key`) attributes, its text, and the ```text block printed right after
    it, if any."""

    language: str
    attributes: dict[str, str]
    body: str
    output: str | None = None

    @property
    def tested(self) -> bool:
        return self.language == "sh" or (
            self.language in ("json", "js") and bool({"tool", "file", "app"} & self.attributes.keys())
        )


FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def guide_blocks(markdown: str) -> list[Block]:
    """The guide's fenced blocks in order, each ```text block that follows a
    tested one with nothing but blank lines between taken as its output."""
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.DOTALL)
    blocks: list[Block] = []
    last_end = None
    for fence in FENCE.finditer(markdown):
        info = fence.group(1).split()
        language = info[0] if info else ""
        attributes = dict((word.split("=", 1) + [""])[:2] for word in info[1:])
        between = markdown[last_end : fence.start()] if last_end is not None else "x"
        last_end = fence.end()
        if language == "text" and blocks and blocks[-1].tested and between.strip() == "" and blocks[-1].output is None:
            blocks[-1].output = fence.group(2)
            continue
        blocks.append(Block(language, attributes, fence.group(2)))
    return blocks


def says(output: str, expected: str, port: int, what: str) -> None:
    """Every line of `expected` is in `output`: its pieces between `…` in
    order, with the guide's port read as the test's."""
    for line in expected.replace(GUIDE_PORT, str(port)).splitlines():
        at = 0
        for piece in (p for p in line.split("…") if p.strip()):
            found = output.find(piece, at)
            assert found >= 0, f"{what} did not print {piece!r} (of the guide's line {line!r}); it printed:\n{output}"
            at = found + len(piece)


def up(shed: Shed, args: list[str]) -> tuple[str, str]:
    """The guide's `shed up …` on the test's data folder and port: what it
    printed, and the token."""
    shed.process = subprocess.Popen(
        [str(shed.bin), *args, "--port", str(shed.port)],
        env={**shed.env(), "SHED_DATA": str(shed.data)},
        cwd=REPO,
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
    token = next(line.split()[-1] for line in printed if line.startswith("Token:"))
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", shed.port), timeout=0.2).close()
            return "".join(printed), token
        except OSError:
            assert time.monotonic() < deadline, "shed up did not start serving"
            time.sleep(0.05)


def shell(shed: Shed, line: str) -> str:
    """One of the guide's `shed …` lines, as typed beside the server, on its
    data folder: what it printed."""
    args = shlex.split(line)
    assert args[0] == "shed", f"the guide's shell line {line!r} is not a shed command"
    done = subprocess.run(
        [str(shed.bin), *args[1:]],
        env={**shed.env(), "SHED_DATA": str(shed.data)},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"`{line}` failed ({done.returncode}): {done.stderr}{done.stdout}"
    return done.stdout + done.stderr


def page_calls(script: str) -> list[tuple[str, Any]]:
    """The `query('…')` lines and `apply({…})` bundles of a page's script,
    in order: ("graph_query", filter) or ("graph_apply", bundle)."""
    calls: list[tuple[str, Any]] = []
    for call in re.finditer(r"\b(query|apply)\(", script):
        if call.group(1) == "query":
            line = re.match(r"'([^']*)'\)", script[call.end() :])
            assert line, f"a query in the guide's page is not a literal filter line: {script[call.start():][:60]}"
            calls.append(("graph_query", line.group(1)))
        else:
            depth, end = 0, call.end()
            for end in range(call.end(), len(script)):
                depth += {"(": 1, ")": -1}.get(script[end], 0)
                if depth < 0:
                    break
            calls.append(("graph_apply", json.loads(script[call.end() : end])))
    return calls


def test_the_guide_s_blocks_are_marked_as_the_test_reads_them() -> None:
    blocks = guide_blocks(GUIDE.read_text())
    tested = [b for b in blocks if b.tested]
    assert sum(b.language == "sh" for b in tested) >= 2
    assert sum("tool" in b.attributes for b in tested) >= 5
    assert sum("file" in b.attributes for b in tested) == 2
    assert sum("app" in b.attributes for b in tested) == 1
    # The first shell line starts the server the rest is run against.
    assert next(b for b in tested if b.language == "sh").body.splitlines()[0] == "shed up"


async def test_what_the_guide_shows_is_what_shed_does(shed: Shed) -> None:
    blocks = [b for b in guide_blocks(GUIDE.read_text()) if b.tested]
    client = None
    token = None
    async with httpx2.AsyncClient(timeout=30) as http:
        try:
            for block in blocks:
                if "file" in block.attributes:
                    shown = json.loads(block.body)
                    assert shown == json.loads((REPO / block.attributes["file"]).read_text()), (
                        f"the guide shows {block.attributes['file']} otherwise than it is"
                    )
                    continue
                if block.language == "sh":
                    printed = ""
                    for line in block.body.splitlines():
                        if line.split()[:2] == ["shed", "up"]:
                            said, token = up(shed, shlex.split(line)[1:])
                            printed += said
                        else:
                            printed += shell(shed, line)
                    if block.output is not None:
                        says(printed, block.output, shed.port, f"```sh {block.body.strip()!r}")
                    continue
                if client is None:
                    assert token is not None, "the guide calls a tool before `shed up`"
                    http.headers["Authorization"] = f"Bearer {token}"
                    client = Client(streamable_http_client(shed.mcp_url, http_client=http))
                    await client.__aenter__()
                if "tool" in block.attributes:
                    args = json.loads(block.body)
                    answer = await client.call_tool(block.attributes["tool"], args)
                    said = text(answer)
                    what = f"{block.attributes['tool']} {json.dumps(args)}"
                    if "refused" in block.attributes:
                        assert answer.is_error, f"{what} was not refused: {said}"
                    else:
                        assert not answer.is_error, f"{what} was refused: {said}"
                    if block.output is not None:
                        says(said, block.output, shed.port, what)
                    continue
                app = block.attributes["app"]
                calls = page_calls(block.body)
                assert calls, "the guide's page calls neither query nor apply"
                for tool, value in calls:
                    args = {"app": app, "filter": value} if tool == "graph_query" else {"app": app, "bundle": value}
                    answer = await client.call_tool(tool, args)
                    assert not answer.is_error, f"the page's {tool} {json.dumps(value)} was refused: {text(answer)}"
        finally:
            if client is not None:
                await client.__aexit__(None, None, None)


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir() if (p / "vocab.json").exists()))
def test_every_example_app_deploys(shed: Shed, example: str) -> None:
    shed.person("you", "You")
    shed.space("demo", "you")
    deployed = shed.deploy(EXAMPLES / example, f"demo/{example}", "you").stdout
    assert deployed.startswith(f"deployed demo/{example} v1: "), deployed


@pytest.mark.parametrize("page", sorted(p.name for p in READING_LIST.glob("*.html")))
def test_the_reading_list_s_pages_say_their_language_and_have_a_main_landmark(page: str) -> None:
    html = (READING_LIST / page).read_text()
    assert re.search(r'<html lang="[a-z]{2}', html), f"{page} says no lang"
    assert "<main>" in html and "</main>" in html, f"{page} has no main landmark"
    for field in re.finditer(r"<input[^>]*>", html):
        before = html[: field.start()]
        assert before.rfind("<label") > before.rfind("</label>"), f"{page}: {field.group(0)} has no label"


def test_the_readme_s_first_screen_says_what_shed_is_for_and_points_to_the_guide() -> None:
    first_screen = "\n".join(REPO.joinpath("README.md").read_text().splitlines()[:40])
    assert "docs/apps.md" in first_screen
    assert "cargo run --release --bin shed -- up" in first_screen
    assert "./scripts/test" in first_screen
