"""What a directory asks of an operator, black-box against `shed serve`: the
privacy policy and terms of service addresses (`--privacy-url`,
`--terms-url`) linked from the consent page, the sign-in page and both OAuth
metadata documents — and nowhere when not given; a domain-verification file
(`--well-known-file NAME=FILE`) served byte for byte at `/.well-known/NAME`
on the platform's host only, and 404 when not given; every bad value refused
at start with a sentence, nothing made."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest

from conftest import Shed, free_port

PRIVACY = "https://example.org/privacy"
# http is taken on a loopback host only.
TERMS = "http://localhost:8080/terms"
REDIRECT = "http://127.0.0.1:4321/callback"
# A PKCE S256 challenge (its verifier is never needed: nothing is exchanged).
CHALLENGE = "YpufkTFi3rca7K9heR3Rw4S55uX_EjflC3Rx4HCLc8c"
# A token as a directory hands it out: served exactly, newline and all.
TOKEN = b"verify-7f3a9c\xe2\x9c\x93\n"
DOCUMENT = b'{"apps": ["shed"]}'


def get(shed: Shed, path: str, *, host: str | None = None, cookie: str | None = None, **params: str) -> httpx2.Response:
    headers = {"Host": host or f"localhost:{shed.port}"}
    if cookie is not None:
        headers["Cookie"] = cookie
    return httpx2.get(f"http://127.0.0.1:{shed.port}{path}", params=params, headers=headers, timeout=30)


def signed_in(shed: Shed, handle: str) -> str:
    """The platform host's session cookie of `handle`, from a `shed login`
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
    session = [cookie for cookie in cookies if cookie.startswith("shed_session=")]
    assert session, cookies
    return session[0]


def authorize_pages(shed: Shed) -> tuple[str, str]:
    """The pages a registered client's sign-in reaches: signed out, how to
    sign in; in ada's signed-in browser, the consent page."""
    registered = httpx2.post(
        f"{shed.public_url}/oauth/register",
        json={"client_name": "Directory client", "redirect_uris": [REDIRECT]},
        timeout=30,
    )
    assert registered.status_code == 201, registered.text
    ask = {
        "response_type": "code",
        "client_id": registered.json()["client_id"],
        "redirect_uri": REDIRECT,
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "state": "st-1",
    }
    signed_out = get(shed, "/oauth/authorize", **ask)
    assert signed_out.status_code == 200 and "Sign in first" in signed_out.text, signed_out.text
    consent = get(shed, "/oauth/authorize", cookie=signed_in(shed, "ada"), **ask)
    assert consent.status_code == 200, consent.text
    assert "Allow" in consent.text and "Directory client" in consent.text, consent.text
    return signed_out.text, consent.text


def metadata(shed: Shed) -> dict[str, dict[str, Any]]:
    """Both OAuth metadata documents (and the MCP endpoint's resource's), by path."""
    documents = {}
    for path in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        answer = get(shed, path)
        assert answer.status_code == 200, answer.text
        documents[path] = answer.json()
    return documents


@pytest.fixture
def ada(shed: Shed) -> Shed:
    shed.person("ada", "Ada")
    shed.space("demo", "ada")
    return shed


def test_privacy_and_terms_are_linked_from_consent_sign_in_and_metadata_only_when_given(ada: Shed) -> None:
    # Not given: no link, no key.
    ada.serve()
    for page in (*authorize_pages(ada), get(ada, "/_shed/signin").text, get(ada, "/").text):
        assert "privacy" not in page.lower() and "terms" not in page.lower(), page
    for path, document in metadata(ada).items():
        for key in ("op_policy_uri", "op_tos_uri", "resource_policy_uri", "resource_tos_uri"):
            assert key not in document, (path, document)
    ada.stop()

    ada.serve("--privacy-url", PRIVACY, "--terms-url", TERMS)
    # The consent page, and each page that says how to sign in.
    for page in (*authorize_pages(ada), get(ada, "/_shed/signin").text, get(ada, "/").text):
        assert f'href="{PRIVACY}"' in page and f'href="{TERMS}"' in page, page
    documents = metadata(ada)
    server = documents["/.well-known/oauth-authorization-server"]
    assert server["op_policy_uri"] == PRIVACY and server["op_tos_uri"] == TERMS, server
    # Both ways a client registers are still offered.
    assert server["client_id_metadata_document_supported"] is True, server
    assert server["registration_endpoint"] == f"{ada.public_url}/oauth/register", server
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        resource = documents[path]
        assert resource["resource_policy_uri"] == PRIVACY and resource["resource_tos_uri"] == TERMS, (path, resource)


def test_a_well_known_file_is_served_byte_for_byte_on_the_platform_host_only_when_given(
    ada: Shed, tmp_path: Path
) -> None:
    ada.serve()
    assert get(ada, "/.well-known/example-verification").status_code == 404
    ada.stop()

    token = tmp_path / "token.txt"
    token.write_bytes(TOKEN)
    document = tmp_path / "site.json"
    document.write_bytes(DOCUMENT)
    ada.serve(
        "--well-known-file",
        f"example-verification={token}",
        "--well-known-file",
        f"example-site.json={document}",
    )
    served = get(ada, "/.well-known/example-verification")
    assert served.status_code == 200, served.text
    assert served.content == TOKEN
    assert served.headers["content-type"] == "text/plain; charset=utf-8"
    assert served.headers["x-content-type-options"] == "nosniff"
    served = get(ada, "/.well-known/example-site.json")
    assert served.status_code == 200 and served.content == DOCUMENT, served.text
    assert served.headers["content-type"] == "application/json"
    # Read once, at start: the file changed since is not what is served.
    token.write_bytes(b"changed\n")
    assert get(ada, "/.well-known/example-verification").content == TOKEN
    # Only the platform's host: a space's host is an app's, and has none.
    assert get(ada, "/.well-known/example-verification", host=f"demo.localhost:{ada.port}").status_code == 404
    # Only the names given; shed's own documents are still its own.
    assert get(ada, "/.well-known/other").status_code == 404
    assert metadata(ada)["/.well-known/oauth-authorization-server"]["issuer"] == ada.public_url


def refused_at_start(shed: Shed, tmp_path: Path, command: str, *flags: str) -> str:
    """`shed <command> <flags>` on a data folder not yet made, which must be
    refused: what it said. Nothing is made, nothing listens."""
    data = tmp_path / "never-made"
    done = subprocess.run(
        [str(shed.bin), command, "--data", str(data), "--listen", f"127.0.0.1:{free_port()}", *flags],
        capture_output=True,
        text=True,
        env=shed.env(),
        timeout=60,
    )
    assert done.returncode != 0, done.stdout + done.stderr
    assert not data.exists(), f"{data} was made: {done.stderr}"
    return done.stderr


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--privacy-url", "ftp://example.org/privacy", "absolute https address"),
        ("--privacy-url", "http://example.org/privacy", "absolute https address"),
        ("--terms-url", "/terms", "absolute https address"),
        ("--terms-url", "https://someone@example.org/terms", "absolute https address"),
        ("--well-known-file", "example-verification", "NAME=FILE"),
        ("--well-known-file", "../secret={token}", "one path segment"),
        ("--well-known-file", "a/b={token}", "one path segment"),
        ("--well-known-file", ".hidden={token}", "one path segment"),
        ("--well-known-file", "oauth-authorization-server={token}", "shed's own"),
        ("--well-known-file", "oauth-protected-resource={token}", "shed's own"),
        ("--well-known-file", "openid-configuration={token}", "shed's own"),
        ("--well-known-file", "example-verification={missing}", "could not read"),
        ("--well-known-file", "example-verification={large}", "64 KiB"),
        ("--well-known-file", "example-verification={folder}", "could not read"),
    ],
)
@pytest.mark.parametrize("command", ["serve", "up"])
def test_a_bad_operator_flag_is_refused_at_start_with_a_sentence(
    shed: Shed, tmp_path: Path, command: str, flag: str, value: str, said: str
) -> None:
    token = tmp_path / "token.txt"
    token.write_bytes(TOKEN)
    large = tmp_path / "large.txt"
    large.write_bytes(b"x" * (64 * 1024 + 1))
    value = value.format(token=token, missing=tmp_path / "missing.txt", large=large, folder=tmp_path)
    stderr = refused_at_start(shed, tmp_path, command, flag, value)
    assert flag in stderr and said in stderr, stderr
    assert "unexpected argument" not in stderr, stderr


def test_a_name_given_twice_is_refused_at_start(shed: Shed, tmp_path: Path) -> None:
    token = tmp_path / "token.txt"
    token.write_bytes(TOKEN)
    given = f"example-verification={token}"
    stderr = refused_at_start(shed, tmp_path, "serve", "--well-known-file", given, "--well-known-file", given)
    assert "--well-known-file" in stderr and "twice" in stderr, stderr


def test_the_largest_well_known_file_is_served(ada: Shed, tmp_path: Path) -> None:
    largest = tmp_path / "largest.txt"
    largest.write_bytes(b"y" * (64 * 1024))
    ada.serve("--well-known-file", f"largest.txt={largest}")
    assert get(ada, "/.well-known/largest.txt").content == largest.read_bytes()
