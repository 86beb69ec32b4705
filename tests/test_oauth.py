"""Signing in from an MCP client with OAuth 2.1, as a user's client does it:
the official SDK's `OAuthClientProvider` against a real `shed serve`. Its
first call beyond the handshake is a 401 naming the protected resource's
metadata; the client discovers the authorization server, registers — by
Dynamic Client Registration, or by a Client ID Metadata Document this test
serves over https on loopback under a CA of its own, which shed trusts
through `SHED_OAUTH_EXTRA_CA` and fetches from loopback only with
`SHED_OAUTH_ALLOW_LOOPBACK_DOCUMENTS` (`--oauth-allow-loopback-documents`,
for tests) — and sends the person to the consent page,
which headless chromium drives (tests/browser/oauth-consent.mjs): signed
out, then a `shed login` link, back to the consent page, Allow. The code is
exchanged with PKCE; `commands` and a `command` write answer as the person;
the access token expires (SHED_OAUTH_ACCESS_SECONDS) and is refreshed;
revoked, the next call is a 401.
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import re
import shutil
import ssl
import threading
import time
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from conftest import REPO, RUN_CLUB, Shed, free_port, ok, unauthorized

pytestmark = pytest.mark.anyio

BROWSER = REPO / "tests" / "browser"
ACCESS_SECONDS = 4
# A call of `commands`, the params of a raw `tools/call`.
COMMANDS = {"name": "commands", "arguments": {}}


# -- a CA of the test's own, and the client's metadata document over https ------
def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_ca_and_server_cert(folder: Path) -> tuple[Path, Path, Path]:
    """A root CA (its PEM for shed to trust) and a certificate it signs for
    127.0.0.1: the paths of the CA, the server's certificate and its key."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("shed test CA"))
        .issuer_name(_name("shed test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = (folder / "ca.pem", folder / "server.pem", folder / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


class Documents:
    """An https server on 127.0.0.1 serving JSON documents by path, counting
    how often each was fetched."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.documents: dict[str, bytes] = {}
        self.fetched: dict[str, int] = {}
        served = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                body = served.documents.get(self.path)
                served.fetched[self.path] = served.fetched.get(self.path, 0) + 1
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "max-age=300")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.origin = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, path: str, document: dict[str, Any]) -> str:
        self.documents[path] = json.dumps(document).encode()
        return self.origin + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the client's side ------------------------------------------------------------
class Kept:
    """The SDK's token storage, in memory; every token set kept in order."""

    def __init__(self) -> None:
        self.tokens: list[OAuthToken] = []
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens[-1] if self.tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The person at the browser: each authorization URL is opened in a fresh
    headless chromium, signed in with a new `shed login` link and answered."""

    def __init__(self, shed: Shed, handle: str, redirect_uri: str, screenshot: str) -> None:
        self.shed, self.handle, self.redirect_uri, self.screenshot = shed, handle, redirect_uri, screenshot
        self.visits: list[dict[str, str]] = []

    async def redirect_handler(self, authorization_url: str) -> None:
        link = self.shed.run("login", self.handle).stdout.strip()
        done = await anyio.run_process(
            ["node", "oauth-consent.mjs", authorization_url, link, self.redirect_uri, "allow", self.screenshot],
            cwd=BROWSER,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
        self.visits.append(json.loads(done.stdout.decode().strip().splitlines()[-1]))

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = parse_qs(urlparse(self.visits[-1]["redirect"]).query)
        assert "error" not in query, query
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])


@pytest.fixture
def ca(tmp_path: Path) -> tuple[Path, Path, Path]:
    return make_ca_and_server_cert(tmp_path)


@pytest.fixture
def documents(ca: tuple[Path, Path, Path]) -> Iterator[Documents]:
    served = Documents(ca[1], ca[2])
    yield served
    served.close()


@pytest.fixture
def club(shed: Shed, ca: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> Shed:
    """Ada owns demo with the run club as demo/runs; served with short-lived
    access tokens and the test's CA trusted for metadata documents."""
    if shutil.which("node") is None or not (BROWSER / "node_modules").exists():
        pytest.fail("the browser step needs node and tests/browser/node_modules — run tests/browser/install.sh")
    monkeypatch.setenv("SHED_OAUTH_ACCESS_SECONDS", str(ACCESS_SECONDS))
    monkeypatch.setenv("SHED_OAUTH_EXTRA_CA", str(ca[0]))
    # The document is served on loopback, which `shed serve` fetches from
    # only with its development flag.
    monkeypatch.setenv("SHED_OAUTH_ALLOW_LOOPBACK_DOCUMENTS", "true")
    shed.person("ada", "Ada")
    shed.space("demo", "ada")
    shed.deploy(RUN_CLUB, "demo/runs", "ada", "--title", "Run club")
    shed.serve()
    return shed


def a_callback() -> str:
    """A loopback redirect URI, as a native client listens on."""
    return f"http://127.0.0.1:{free_port()}/callback"


async def sign_in_use_and_refresh(
    club: Shed, name: str, callback: str, metadata_url: str | None = None, headers: dict[str, str] | None = None
) -> tuple[Kept, Person]:
    """The whole flow through the SDK as the client `name`: the sign-in, a
    read and a write as ada, a refresh; the grant `shed token list` shows.
    `headers`: sent with every request of the SDK's."""
    kept = Kept()
    person = Person(club, "ada", callback, f"oauth-consent-{'cimd' if metadata_url else 'dcr'}.png")
    provider = OAuthClientProvider(
        server_url=club.mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=name,
            redirect_uris=[callback],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=kept,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
        client_metadata_url=metadata_url,
    )
    async with httpx2.AsyncClient(auth=provider, headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(club.mcp_url, http_client=http)) as client:
            commands = ok(await client.call_tool("commands", {}))
            assert any(command["name"] == "log_run" for command in commands["commands"]), commands
            assert len(person.visits) == 1, "one sign-in"
            visit = person.visits[0]
            assert "Sign in first" in visit["signedOutPage"] and "shed login" in visit["signedOutPage"]
            consent = visit["consentPage"]
            assert name in consent and "127.0.0.1" in consent, consent
            assert "Ada (@ada)" in consent and "demo — as owner" in consent, consent
            assert kept.tokens[0].scope == "mcp" and kept.tokens[0].expires_in == ACCESS_SECONDS
            assert kept.tokens[0].access_token.startswith("shed_oauth_")

            wrote = ok(
                await client.call_tool(
                    "command",
                    {"name": "log_run", "app": "demo/runs", "args": {"who": "Ada", "miles": 5, "at": "2026-09-01"}},
                )
            )
            assert wrote, wrote
            board = ok(await client.call_tool("command", {"name": "leaderboard", "app": "demo/runs"}))
            assert [row["created"]["by"]["name"] for row in board["rows"]] == ["Ada"], board

            # The access token expires; the SDK refreshes it before its next call.
            time.sleep(ACCESS_SECONDS + 1)
            ok(await client.call_tool("commands", {}))
            assert len(kept.tokens) == 2 and len(person.visits) == 1, "refreshed, not signed in again"
            first, second = kept.tokens
            assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
            # An expired access token: a 401.
            challenge = unauthorized(club, "tools/call", COMMANDS, token=first.access_token)
            assert 'error="invalid_token"' in challenge

    listed = club.run("token", "list", "ada").stdout
    grant = re.search(rf"^(oauth-\d+) +{re.escape(name)} \(OAuth\) +ada  ", listed, re.M)
    assert grant, listed
    # The write is on ada's activity, by the client's registered name.
    activity = club.run("activity", "--as", "ada").stdout
    wrote = re.search(rf"demo/runs@1 +@ada +{re.escape(name)} +mcp log_run ", activity)
    assert wrote, activity
    return kept, person


async def test_dcr_sign_in_refresh_and_revoke(club: Shed) -> None:
    kept, _ = await sign_in_use_and_refresh(club, "Test DCR client", a_callback())
    latest = kept.tokens[-1]
    async with httpx2.AsyncClient(timeout=30) as http:
        revoked = await http.post(f"{club.public_url}/oauth/revoke", data={"token": latest.refresh_token})
        assert revoked.status_code == 200, revoked.text
    challenge = unauthorized(club, "tools/call", COMMANDS, token=latest.access_token)
    assert 'error="invalid_token"' in challenge
    assert "(OAuth)" not in club.run("token", "list", "ada").stdout


async def test_cimd_sign_in_refresh_and_revoke_by_its_id(club: Shed, documents: Documents) -> None:
    path = "/oauth/test-client.json"
    # The document is the client: the SDK sends only its URL as client_id.
    url = documents.origin + path
    name = "Test CIMD client"
    callback = a_callback()
    documents.serve(
        path,
        {
            "client_id": url,
            "client_name": name,
            "redirect_uris": [callback],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    kept, person = await sign_in_use_and_refresh(club, name, callback, url)
    assert kept.client is not None and kept.client.client_id == url
    assert "described by a document at 127.0.0.1" in person.visits[0]["consentPage"]
    assert documents.fetched[path] == 1, "kept for its max-age: the consent's GET and POST fetched it once"

    grant = re.search(r"^(oauth-\d+) +Test CIMD client", club.run("token", "list").stdout, re.M)
    assert grant
    assert club.run("token", "revoke", grant.group(1)).stdout.strip() == f"revoked token {grant.group(1)}"
    challenge = unauthorized(club, "tools/call", COMMANDS, token=kept.tokens[-1].access_token)
    assert 'error="invalid_token"' in challenge
    async with httpx2.AsyncClient(timeout=30) as http:
        refreshed = await http.post(
            f"{club.public_url}/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": kept.tokens[-1].refresh_token, "client_id": url},
        )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant", refreshed.text
