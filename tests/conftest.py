"""Fixtures for the black-box tests: the built `shed` binary, a fresh data
folder, admin commands, a running `shed serve` on a free port, and MCP
clients (the official SDK's) over Streamable HTTP and over stdio.

The binary is $SHED_BIN, else <repo>/target/debug/shed (./scripts/test builds it).

With SHED_TEST_DATABASE naming a PostgreSQL server (scripts/postgres-cluster
sets it), each test's shed keeps its data in a new database of its own on that
server (SHED_DATABASE_URL) instead of the data folder's SQLite file.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
RUN_CLUB = REPO / "examples" / "run-club"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def shed_bin() -> Path:
    path = Path(os.environ.get("SHED_BIN", REPO / "target" / "debug" / "shed"))
    if not path.exists():
        pytest.fail(f"no shed binary at {path} — run `cargo build --bin shed` or set SHED_BIN")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Shed:
    """One data folder, and the `shed` binary pointed at it."""

    bin: Path
    data: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    # The database on a server that holds the data (None: the SQLite file).
    database: str | None = None

    @property
    def public_url(self) -> str:
        return f"http://localhost:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.public_url}/mcp"

    def env(self) -> dict[str, str]:
        env = {**os.environ, "SHED_PUBLIC_URL": self.public_url, "RUST_LOG": "warn"}
        if self.database is not None:
            env["SHED_DATABASE_URL"] = self.database
        return env

    def run(self, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Runs `shed <args> --data <data>` and returns what it printed."""
        done = subprocess.run(
            [str(self.bin), *args, "--data", str(self.data)],
            capture_output=True,
            text=True,
            input=stdin,
            env=self.env(),
            timeout=60,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"shed {' '.join(args)} failed ({done.returncode}): {done.stderr}{done.stdout}")
        return done

    # -- administration, through the CLI ------------------------------------
    def person(self, handle: str, name: str | None = None) -> None:
        self.run("person", "add", handle, *(["--name", name] if name else []))

    def space(self, slug: str, owner: str) -> None:
        self.run("space", "add", slug, "--owner", owner)

    def member(self, space: str, handle: str, role: str) -> None:
        self.run("member", "add", space, handle, "--role", role)

    def token(self, handle: str) -> str:
        """A bearer token for `handle` (made once per handle)."""
        if handle not in self.tokens:
            printed = self.run("token", "create", handle).stdout
            self.tokens[handle] = printed.strip().splitlines()[-1].split()[-1]
        return self.tokens[handle]

    def deploy(self, folder: Path, app: str, handle: str, *extra: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`shed deploy <folder> --to <app> --as <handle>`."""
        return self.run("deploy", str(folder), "--to", app, "--as", handle, *extra, check=check)

    # -- the server ---------------------------------------------------------
    def serve(self, *flags: str, output: Path | None = None, env: dict[str, str | None] | None = None) -> None:
        """Starts `shed serve <flags>` and waits until it listens. `output`: a
        file that takes what it prints on stdout and stderr (else stdout is
        dropped and stderr kept for a failed start); `env`: variables to set
        over `env()`'s, None to unset one."""
        environment = self.env()
        for name, value in (env or {}).items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = value
        printed = output.open("ab") if output is not None else None
        self.process = subprocess.Popen(
            [str(self.bin), "serve", "--data", str(self.data), "--listen", f"127.0.0.1:{self.port}", *flags],
            env=environment,
            stdout=printed or subprocess.DEVNULL,
            stderr=printed or subprocess.PIPE,
        )
        if printed is not None:
            printed.close()  # the child holds its own
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                said = output.read_text() if output is not None else self.process.stderr.read().decode()
                raise AssertionError(f"shed serve exited: {said}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("shed serve did not start listening within 30s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    # -- MCP clients --------------------------------------------------------
    @asynccontextmanager
    async def http(
        self,
        handle: str | None = None,
        *,
        mode: str = "auto",
        token: str | None = None,
        event_hooks: dict[str, list[Any]] | None = None,
        **options: Any,
    ) -> AsyncIterator[Client]:
        """An MCP client over Streamable HTTP, signed in as `handle` (or with
        `token`), or signed out when both are None; `event_hooks` go to its
        HTTP client (to watch the requests it sends), `options` to `Client`."""
        headers = {}
        bearer = token if token is not None else (self.token(handle) if handle else None)
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        async with httpx2.AsyncClient(headers=headers, timeout=30, event_hooks=event_hooks) as http_client:
            async with Client(
                streamable_http_client(self.mcp_url, http_client=http_client), mode=mode, **options
            ) as client:
                yield client

    @asynccontextmanager
    async def stdio(self, handle: str, *, mode: str = "auto") -> AsyncIterator[Client]:
        """An MCP client speaking to `shed mcp --as <handle>` over stdio."""
        params = StdioServerParameters(
            command=str(self.bin),
            args=["mcp", "--as", handle, "--data", str(self.data)],
            env=self.env(),
        )
        async with Client(params, mode=mode) as client:
            yield client


def fresh_database() -> str | None:
    """A new, empty database on the server SHED_TEST_DATABASE names (made
    with psql), its URL; None when the tests run on SQLite."""
    server = os.environ.get("SHED_TEST_DATABASE")
    if not server:
        return None
    name = f"shed_pytest_{os.getpid()}_{time.monotonic_ns()}"
    subprocess.run(["psql", server, "-qc", f"CREATE DATABASE {name}"], check=True, timeout=60)
    return f"{server.rsplit('/', 1)[0]}/{name}"


@pytest.fixture
def shed(shed_bin: Path, tmp_path: Path) -> Any:
    """A fresh, empty data folder (and on a server, a fresh database) and a port;
    `shed.serve()` starts the server, which is killed after the test."""
    instance = Shed(bin=shed_bin, data=tmp_path / "data", port=free_port(), database=fresh_database())
    # Set up by hand, as `mkdir -m 700` does: only a server makes a data folder.
    instance.data.mkdir(mode=0o700)
    yield instance
    instance.stop()


@pytest.fixture
def two(shed: Shed) -> Shed:
    """Ada and Bo, each owning a space of their name; the run club deployed as
    ada/runs; served."""
    shed.person("ada", "Ada")
    shed.person("bo", "Bo")
    shed.space("ada", "ada")
    shed.space("bo", "bo")
    shed.deploy(RUN_CLUB, "ada/runs", "ada", "--title", "Run club")
    shed.serve()
    return shed


def unauthorized(shed: Shed, method: str, params: dict[str, Any], token: str | None = None) -> str:
    """One raw JSON-RPC request to /mcp (2025-11-25, no session) that must be
    answered HTTP 401: its `WWW-Authenticate`, which names the protected
    resource's metadata (and `error="invalid_token"` for a refused token)."""
    headers = {"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    answer = httpx2.post(
        shed.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers, timeout=30
    )
    assert answer.status_code == 401, f"{method} was answered {answer.status_code}: {answer.text}"
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith(
        f'Bearer resource_metadata="{shed.public_url}/.well-known/oauth-protected-resource/mcp"'
    ), challenge
    return challenge


class Heard:
    """The notifications a session heard, as a client's message handler
    (`message_handler=`): `methods` in the order they came."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._waited = 0
        self._news = anyio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            self.methods.append(method)
            self._news.set()
            self._news = anyio.Event()

    async def until(self, *methods: str) -> None:
        """Waits, up to 10 s, until every one of `methods` was heard since
        the last wait ended (or since the session began)."""
        with anyio.fail_after(10):
            while not set(methods) <= set(self.methods[self._waited :]):
                await self._news.wait()
        self._waited = len(self.methods)


# -- reading answers ----------------------------------------------------------
def text(result: Any) -> str:
    """The text of a tool result, its lines joined."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def ok(result: Any) -> Any:
    """A tool result that must have succeeded: its structured content."""
    assert not result.is_error, text(result)
    return result.structured_content


def refused(result: Any) -> str:
    """A tool result that must have been refused: its sentence."""
    assert result.is_error, f"expected a refusal, got: {text(result)} {json.dumps(result.structured_content)}"
    return text(result)
