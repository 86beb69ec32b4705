"""shed behind a reverse proxy, as the README's "Connect from a hosted chat
client" sets it up, with `--trusted-proxy`:

- the official SDK's OAuth client (Dynamic Client Registration, the consent
  page in headless chromium, PKCE, a refresh) through an nginx-like proxy of
  the test's own that appends the client's address to X-Forwarded-For and
  passes everything else on as it came — the `Forwarded` and
  `X-Forwarded-For` the client made up included;
- the README's Caddyfile run by the real Caddy (Debian's `caddy`;
  scripts/test installs it, and without it the test is skipped saying so)
  in front of `shed serve`, over HTTPS under Caddy's local CA: an MCP call
  with the SDK, a space's page through the wildcard name, and a client that
  writes its own forwarding headers counted as the address it comes from.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import REPO, RUN_CLUB, Shed, fresh_database, free_port, ok
from test_oauth import ACCESS_SECONDS, BROWSER, a_callback, sign_in_use_and_refresh

pytestmark = pytest.mark.anyio

# The most bytes of a request head the test's proxy reads.
MOST_HEAD_BYTES = 64 * 1024
# Where the test's proxy connects to shed from: the one address shed trusts.
PROXY_ADDRESS = "127.0.0.9"
# Headers a client makes up, naming addresses that are not its own.
MADE_UP = {"Forwarded": "for=198.51.100.7;proto=https", "X-Forwarded-For": "203.0.113.7"}
# shed_mcp::MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS.
SIGNED_OUT_SESSIONS_PER_ADDRESS = 16
# The bursts of shed_host::oauth::REGISTRATIONS_PER_ADDRESS and _OVERALL.
REGISTRATIONS_PER_ADDRESS = 10
REGISTRATIONS_OVERALL = 60


@dataclass
class Fronted(Shed):
    """A `shed` whose public URL is its proxy's, `front`."""

    front: str = ""

    @property
    def public_url(self) -> str:
        return self.front


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copies `source` to `sink` until `source` ends, then ends `sink`'s side."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class AppendingProxy:
    """A reverse proxy on 127.0.0.1, nginx-like: to each request it adds the
    address it was reached from to X-Forwarded-For (after the client's own,
    in one line, as `$proxy_add_x_forwarded_for` does) and `Connection:
    close`, passes the rest on as it came, and reaches shed from
    [`PROXY_ADDRESS`]."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.upstream = 0

    def forward_to(self, upstream: int) -> None:
        self.upstream = upstream
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, peer = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._pass_on, args=(client, peer[0]), daemon=True).start()

    def _pass_on(self, client: socket.socket, peer: str) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(65536)
                if not chunk or len(head) > MOST_HEAD_BYTES:
                    return
                head += chunk
            head, rest = head.split(b"\r\n\r\n", 1)
            request_line, *fields = head.split(b"\r\n")
            kept, forwarded_for = [request_line], []
            for field in fields:
                name = field.partition(b":")[0].strip().lower()
                if name == b"x-forwarded-for":
                    forwarded_for.append(field.partition(b":")[2].strip())
                elif name != b"connection":
                    kept.append(field)
            forwarded_for.append(peer.encode())
            kept += [b"X-Forwarded-For: " + b", ".join(forwarded_for), b"Connection: close"]
            with socket.create_connection(("127.0.0.1", self.upstream), source_address=(PROXY_ADDRESS, 0)) as shed:
                shed.sendall(b"\r\n".join(kept) + b"\r\n\r\n" + rest)
                upstream = threading.Thread(target=_pump, args=(client, shed), daemon=True)
                upstream.start()
                _pump(shed, client)
                upstream.join()


def fronted(shed_bin: Path, tmp_path: Path, front: str) -> Fronted:
    """A fresh data folder (and database) served at `front`."""
    instance = Fronted(bin=shed_bin, data=tmp_path / "data", port=free_port(), database=fresh_database(), front=front)
    instance.data.mkdir(mode=0o700)
    return instance


def with_the_club(shed: Shed) -> None:
    """Ada owns demo with the run club as demo/runs."""
    shed.person("ada", "Ada")
    shed.space("demo", "ada")
    shed.deploy(RUN_CLUB, "demo/runs", "ada", "--title", "Run club")


@pytest.fixture
def proxied(shed_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fronted]:
    """The club served behind an [`AppendingProxy`] it trusts, with
    short-lived access tokens."""
    if shutil.which("node") is None or not (BROWSER / "node_modules").exists():
        pytest.fail("the browser step needs node and tests/browser/node_modules — run tests/browser/install.sh")
    proxy = AppendingProxy()
    shed = fronted(shed_bin, tmp_path, f"http://localhost:{proxy.port}")
    monkeypatch.setenv("SHED_OAUTH_ACCESS_SECONDS", str(ACCESS_SECONDS))
    monkeypatch.setenv("SHED_TRUSTED_PROXY", PROXY_ADDRESS)
    with_the_club(shed)
    shed.serve()
    proxy.forward_to(shed.port)
    yield shed
    shed.stop()
    proxy.close()


async def test_the_sdks_oauth_client_signs_in_behind_a_trusted_proxy(proxied: Fronted) -> None:
    # The review's reproduction first: a client at another address floods
    # registrations, each naming another made-up address; counted as
    # itself, it spends its own ten, not everyone's sixty.
    transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
    statuses = []
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        for n in range(REGISTRATIONS_OVERALL + 10):
            made_up = {"Forwarded": f"for=198.51.100.{n}", "X-Forwarded-For": f"203.0.113.{n}"}
            client = {"client_name": "Flood", "redirect_uris": ["http://127.0.0.1:9/cb"]}
            answer = await http.post(f"{proxied.public_url}/oauth/register", json=client, headers=made_up)
            statuses.append(answer.status_code)
    assert statuses.count(201) == REGISTRATIONS_PER_ADDRESS, statuses
    # Every request of the SDK's says made-up addresses too; the proxy
    # passes them on, and the whole flow works as without a proxy.
    kept, _ = await sign_in_use_and_refresh(proxied, "Proxied DCR client", a_callback(), headers=MADE_UP)
    assert len(kept.tokens) == 2


# -- the README's Caddyfile, run by Caddy --------------------------------------------
def readme_caddyfile() -> str:
    """The Caddyfile the README's proxy section shows, as written there."""
    readme = (REPO / "README.md").read_text()
    found = re.search(r"^( +)(shed\.example\.org, \*\.shed\.example\.org \{\n(?:\1 .*\n)*\1\}\n)", readme, re.M)
    assert found, "the README shows a Caddyfile for shed.example.org"
    return re.sub(rf"^{found.group(1)}", "", found.group(2), flags=re.M)


@dataclass
class Caddy:
    process: subprocess.Popen[bytes]
    port: int
    root: Path

    def tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.root))


@pytest.fixture
def caddy_fronted(shed_bin: Path, tmp_path: Path) -> Iterator[tuple[Fronted, Caddy]]:
    """The club served by `shed serve --trusted-proxy 127.0.0.1` behind the
    README's Caddyfile, its names made `localhost:<port>` and
    `*.localhost:<port>` with Caddy's local CA, and no admin endpoint and no
    HTTP redirect listener (global options the test puts before it)."""
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.skip("caddy is not installed here (Debian's caddy; scripts/test installs it)")
    port = free_port()
    shed = fronted(shed_bin, tmp_path, f"https://localhost:{port}")
    site = readme_caddyfile().replace("shed.example.org", f"localhost:{port}").replace("127.0.0.1:7700", f"127.0.0.1:{shed.port}")
    config = tmp_path / "Caddyfile"
    config.write_text("{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\tauto_https disable_redirects\n}\n\n" + site)
    home = tmp_path / "caddy-home"
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config")}
    log = (tmp_path / "caddy.log").open("wb")
    process = subprocess.Popen([caddy, "run", "--config", str(config), "--adapter", "caddyfile"], env=env, stdout=log, stderr=log)
    root = home / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
    with_the_club(shed)
    shed.serve(env={"SHED_TRUSTED_PROXY": "127.0.0.1"})
    try:
        deadline = time.monotonic() + 30
        while not (root.exists() and listening(port)):
            assert process.poll() is None, f"caddy exited: {(tmp_path / 'caddy.log').read_text()}"
            assert time.monotonic() < deadline, f"caddy did not serve within 30 s: {(tmp_path / 'caddy.log').read_text()}"
            time.sleep(0.1)
        yield shed, Caddy(process, port, root)
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
        shed.stop()


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def get_over_tls(caddy: Caddy, host: str, path: str) -> tuple[int, str, list[str]]:
    """GET `path` from `host` (its name for SNI and Host) through Caddy on
    127.0.0.1 — the resolver here need not know `*.localhost` — its
    certificate checked against Caddy's CA: the status, the body, and the
    names the certificate is for. (OpenSSL matches no wildcard right under a
    one-label name such as `*.localhost`, so the test matches that name.)"""
    context = caddy.tls()
    context.check_hostname = False
    with socket.create_connection(("127.0.0.1", caddy.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            names = [name for kind, name in tls.getpeercert().get("subjectAltName", ()) if kind == "DNS"]
            tls.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{caddy.port}\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := tls.recv(65536):
                answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body.decode(errors="replace"), names


async def test_the_readmes_caddyfile_serves_mcp_and_the_spaces(caddy_fronted: tuple[Fronted, Caddy]) -> None:
    shed, caddy = caddy_fronted
    token = shed.token("ada")
    # An MCP call with the SDK, over HTTPS through Caddy.
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, verify=caddy.tls(), timeout=30) as http:
        async with Client(streamable_http_client(shed.mcp_url, http_client=http)) as client:
            commands = ok(await client.call_tool("commands", {}))
            assert any(command["name"] == "log_run" for command in commands["commands"]), commands
    # A space's page, through the wildcard name: shed answers it as the
    # space's (signed out, with nothing public in it, as not found).
    status, page, names = get_over_tls(caddy, "demo.localhost", "/")
    assert "*.localhost" in names, names
    assert status == 404 and "<title>Space demo</title>" in page, f"{status}: {page[:500]}"
    # A client writing its own forwarding headers is counted as the address
    # it comes from: past its cap of signed-out sessions it is refused.
    transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.2", verify=caddy.tls())
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "caddy", "version": "0"}},
    }
    statuses = []
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        for n in range(SIGNED_OUT_SESSIONS_PER_ADDRESS + 2):
            made_up = {"Forwarded": f"for=198.51.100.{n}", "X-Forwarded-For": f"203.0.113.{n}"}
            answer = await http.post(
                shed.mcp_url,
                json=initialize,
                headers={**made_up, "Accept": "application/json, text/event-stream"},
            )
            statuses.append(answer.status_code)
    assert statuses == [200] * SIGNED_OUT_SESSIONS_PER_ADDRESS + [503, 503], statuses
