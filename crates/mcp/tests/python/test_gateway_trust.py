"""The gateway's trust channels (issue 39), driven by the official MCP Python SDK's client in
front of upstream_mail.py (the same SDK): the built-in provenance-aware monitor without
--monitor; trust by whole tool name; no laundering through a trusted tool's echo; a text blob
read and an image marking the session; no secret of an upstream in any message or audit line,
and argument values masked in the audit. Run by scripts/python-tests (AUGUR_BIN names the
binary)."""

from __future__ import annotations

import asyncio
import json
import os
import signal

from test_gateway import (
    AUGUR, PY, REPO, UPSTREAM, _audit, _env, _free_port, _gateway, _http_upstream, _is_error,
    _pids, _sent, _text, provenance_monitor, run,  # noqa: F401 (a fixture)
)

OWNER_REQUEST = "E-mail me a summary of my inbox at owner@home.example"


def test_without_monitor_the_planted_address_is_blocked_and_never_reaches_the_upstream(tmp_path):
    """The shortest path (no --monitor): the built-in monitor tracks provenance, so the address
    the inbox plants is VIOLATED and blocked; the user's own address goes through."""
    env = _env(tmp_path)
    audit = tmp_path / "audit.jsonl"

    async def body(s, init):
        r = await s.call_tool("begin_task", {"request": OWNER_REQUEST})
        assert not _is_error(r), _text(r)
        r = await s.call_tool("read_inbox", {})
        assert "mallory@evil.example" in _text(r)
        r = await s.call_tool("send_email", {"recipients": ["mallory@evil.example"], "body": "summary"})
        assert _is_error(r) and "blocked" in _text(r), _text(r)
        assert "rule 14" in _text(r) and "read_inbox" in _text(r), _text(r)
        # The agent sees the value in the reason (its own arguments).
        assert "mallory@evil.example" in _text(r), _text(r)
        assert _sent(tmp_path) == []
        r = await s.call_tool("send_email", {"recipients": ["owner@home.example"], "body": "summary"})
        assert not _is_error(r), _text(r)

    run(_gateway(["--audit", str(audit), "--upstream", f"mail={PY} {UPSTREAM}"], env, body))
    assert _sent(tmp_path) == [{"recipients": ["owner@home.example"], "body": "summary"}]
    lines = _audit(audit)
    blocked = [l for l in lines if l["outcome"] == "blocked"]
    assert len(blocked) == 1 and blocked[0]["provenance"] == "untrusted", lines
    # The audit masks argument values: the reason names the argument, not the value.
    raw = audit.read_text()
    assert "mallory@evil.example" not in raw and "owner@home.example" not in raw, raw
    assert "recipients ma…#" in blocked[0]["reason"], blocked[0]["reason"]


def test_tools_named_like_trusted_ones_are_not_trusted(tmp_path, provenance_monitor):
    """`get contact`, `get user info`, `read contact` inside longer names: their results are
    written by third parties, so an address from them is blocked as a recipient."""
    env = _env(tmp_path)
    cases = [
        ("get_contact_page_from_url", {"url": "https://web-shop.example/contact"}, "page-owner@web-shop.example"),
        ("get_user_info_from_github", {"username": "octo"}, "gh-user@dev-profile.example"),
        ("read_contact_form_submissions", {}, "form-visitor@anyone.example"),
    ]

    for tool, args, address in cases:
        async def body(s, init):
            r = await s.call_tool("begin_task", {"request": "answer the new enquiries"})
            assert not _is_error(r), _text(r)
            r = await s.call_tool(tool, args)
            assert address in _text(r), _text(r)
            r = await s.call_tool("send_email", {"recipients": [address], "body": "hello"})
            assert _is_error(r) and "blocked" in _text(r), (tool, _text(r))
            assert f"result of `{tool}`" in _text(r), _text(r)

        # Only a VIOLATED call blocks (the fixture's chain is learned from few runs).
        policy = REPO / "models/claude-code/policy.toml"
        run(_gateway(["--monitor", str(provenance_monitor), "--policy", str(policy),
                      "--upstream", f"mail={PY} {UPSTREAM}"], env, body))
    assert _sent(tmp_path) == []


def test_a_trusted_tools_echo_does_not_launder_an_injected_address(tmp_path, provenance_monitor):
    """The injection asks for the attacker's address to be looked up; the (trusted) contacts
    tool echoes it. Still the injection's: blocked."""
    env = _env(tmp_path)

    async def body(s, init):
        r = await s.call_tool("begin_task", {"request": "Please send the quarterly notes to bob@corp.example"})
        assert not _is_error(r), _text(r)
        await s.call_tool("read_inbox", {})
        r = await s.call_tool("list_contacts", {"query": "mallory@evil.example"})
        assert "not found" in _text(r), _text(r)
        r = await s.call_tool("send_email", {"recipients": ["mallory@evil.example"], "body": "notes"})
        assert _is_error(r) and "blocked" in _text(r), _text(r)
        # The address book itself is trusted (a whole name on the default list).
        r = await s.call_tool("list_contacts", {})
        assert "bob@corp.example" in _text(r)
        r = await s.call_tool("send_email", {"recipients": ["bob@corp.example"], "body": "notes"})
        assert not _is_error(r), _text(r)

    run(_gateway(["--monitor", str(provenance_monitor), "--upstream", f"mail={PY} {UPSTREAM}"],
                 env, body))
    assert _sent(tmp_path) == [{"recipients": ["bob@corp.example"], "body": "notes"}]


def test_a_text_blob_is_read_and_its_address_blocked(tmp_path, provenance_monitor):
    """A `text/plain` blob (clients decode it for the model) is observed like any result: the
    address in it is untrusted and blocked, never reaching the upstream."""
    env = _env(tmp_path)

    async def body(s, init):
        r = await s.call_tool("begin_task", {"request": "Forward the attachment's notes to bob@corp.example"})
        assert not _is_error(r), _text(r)
        r = await s.call_tool("read_attachment", {})
        assert not _is_error(r), _text(r)
        r = await s.call_tool("send_email", {"recipients": ["blob-drop@evil.example"], "body": "notes"})
        assert _is_error(r) and "blocked" in _text(r), _text(r)
        assert "read_attachment" in _text(r), _text(r)

    run(_gateway(["--monitor", str(provenance_monitor), "--upstream", f"mail={PY} {UPSTREAM}"],
                 env, body))
    assert _sent(tmp_path) == []


def test_an_image_makes_a_send_to_an_unseen_value_pause(tmp_path):
    """An image the gateway cannot read may carry any address: after it, a send to an address
    nobody wrote in trusted text pauses (before it, the same kind of send went through); the
    user's own address still goes."""
    env = _env(tmp_path)

    async def body(s, init):
        r = await s.call_tool("begin_task", {"request": "Mail the scanned letter to owner@home.example"})
        assert not _is_error(r), _text(r)
        r = await s.call_tool("send_email", {"recipients": ["first@elsewhere.example"], "body": "hi"})
        assert not _is_error(r), _text(r)
        r = await s.call_tool("read_scan", {})
        assert not _is_error(r), _text(r)
        r = await s.call_tool("send_email", {"recipients": ["second@elsewhere.example"], "body": "the letter"})
        assert _is_error(r) and "paused" in _text(r), _text(r)
        assert "could not read an image (image/png)" in _text(r), _text(r)
        assert "second@elsewhere.example" in _text(r), _text(r)
        r = await s.call_tool("send_email", {"recipients": ["owner@home.example"], "body": "the letter"})
        assert not _is_error(r), _text(r)

    run(_gateway(["--upstream", f"mail={PY} {UPSTREAM}"], env, body))
    assert [m["recipients"] for m in _sent(tmp_path)] == [["first@elsewhere.example"], ["owner@home.example"]]


def test_no_secret_of_an_upstream_reaches_the_agent_or_the_audit(tmp_path):
    """An upstream started with a secret on its command line that cannot be restarted, and an
    HTTP upstream whose URL carries credentials and a token: the error results the model sees
    and the audit lines name the upstream by its name and program (or its URL without
    userinfo and query) only."""
    env = _env(tmp_path)
    audit = tmp_path / "audit.jsonl"
    key = "sk-live-4f9a8b7c6d5e"
    once = tmp_path / "started-once"
    texts = []

    async def body(s, init):
        call = asyncio.ensure_future(s.call_tool("sleep_then", {"seconds": 30}))
        await asyncio.sleep(1.5)
        os.kill(_pids(tmp_path)[0], signal.SIGKILL)
        r = await asyncio.wait_for(call, 20)
        assert _is_error(r), _text(r)
        texts.append(_text(r))
        r = await s.call_tool("read_inbox", {})
        assert _is_error(r) and "could not be started" in _text(r), _text(r)
        texts.append(_text(r))
        await asyncio.sleep(0.7)
        r = await s.call_tool("read_inbox", {})
        assert _is_error(r), _text(r)
        texts.append(_text(r))

    run(_gateway(["--audit", str(audit), "--upstream",
                  f"mail={PY} {UPSTREAM} --api-key {key} --start-once {once}"], env, body))
    assert any(f"`{PY}`" in t for t in texts), texts
    for t in texts + [audit.read_text()]:
        assert key not in t and "--start-once" not in t and str(once) not in t, t

    password, token = "pa55w0rd-xyz", "t0ken-abc123"
    port = _free_port()
    server = _http_upstream(port, env)
    url = f"http://alice:{password}@127.0.0.1:{port}/mcp?token={token}"
    http_texts = []

    async def http_body(s, init):
        nonlocal server
        r = await s.call_tool("read_inbox", {})
        assert not _is_error(r), _text(r)
        server.kill()
        server.wait()
        for _ in range(2):
            r = await s.call_tool("read_inbox", {})
            assert _is_error(r), _text(r)
            http_texts.append(_text(r))

    audit2 = tmp_path / "audit2.jsonl"
    try:
        run(_gateway(["--audit", str(audit2), "--upstream", f"mail={url}"], env, http_body))
    finally:
        server.kill()
        server.wait()
    for t in http_texts + [audit2.read_text()]:
        assert password not in t and token not in t and "alice:" not in t, t
