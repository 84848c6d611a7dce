"""`augur mcp` driven over stdio by real clients: the official Python MCP SDK (a second
implementation beside rmcp), and raw JSON-RPC lines for what an SDK will not send (malformed
messages) and for a bounded soak. Run by scripts/test (AUGUR_BIN names the binary)."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[4]
AUGUR = os.environ.get("AUGUR_BIN", str(REPO / "target" / "debug" / "augur"))

COIN = """dtmc
const double p;
module coin
  x : [0..2] init 0;
  [] x=0 -> p : (x'=1) + (1-p) : (x'=2);
  [] x>0 -> true;
endmodule
label "heads" = x=1;
"""


def _structured(r):
    s = getattr(r, "structured_content", None)
    if s is None:
        s = getattr(r, "structuredContent", None)
    if s is None:
        s = json.loads(r.content[0].text)
    return s


def _is_error(r) -> bool:
    return bool(getattr(r, "is_error", None) or getattr(r, "isError", None))


def _text(r) -> str:
    return "\n".join(c.text for c in r.content if getattr(c, "text", None))


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=120))


async def _with_client(args, body):
    params = StdioServerParameters(command=AUGUR, args=["mcp", *args], cwd=str(REPO))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def test_sdk_client_lists_tools_gates_a_session_and_checks_a_model():
    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert {"gate", "record", "session_state", "summary", "check", "horizon", "pac"} <= set(tools)
        # Harness-only tools are not offered to the agent.
        assert not {"reset", "approve", "deny", "open_session"} & set(tools)
        assert "BEFORE every" in tools["gate"].description

        verdicts = []
        for tool, args in [
            ("read_file", {"path": "/workspace/customers.csv"}),
            ("read_file", {"path": "/workspace/.env"}),
            ("write_file", {"path": "/tmp/summary.txt", "content": "..."}),
            ("send_email", '{"recipients": ["mark.black@gmail.com"], "body": "summary attached"}'),
        ]:
            r = await s.call_tool("gate", {"session": "demo", "tool": tool, "args": args})
            assert not _is_error(r), _text(r)
            verdicts.append(_structured(r)["verdict"])
        assert verdicts == ["allow", "warn", "warn", "block"]
        summary = _structured(await s.call_tool("summary", {"session": "demo"}))
        assert (summary["allow"], summary["warn"], summary["block"]) == (1, 2, 1)

        # An id the harness did not open is refused with a block, never started at SAFE.
        r = _structured(await s.call_tool("gate", {"session": "fresh", "tool": "read_file", "args": {}}))
        assert (r["verdict"], r["refused"]) == ("block", "unknown")
        # The agent cannot move the monitor back.
        r = await s.call_tool("record", {"session": "demo", "tool": "send_email", "executed": False})
        assert _is_error(r) and "harness-only" in _text(r)
        r = await s.call_tool("reset", {"session": "demo"})
        assert _is_error(r) and "harness-only" in _text(r)

        r = await s.call_tool(
            "check",
            {"model_text": COIN, "properties": ['P=? [ F "heads" ]'], "constants": {"p": 0.25}},
        )
        assert not _is_error(r), _text(r)
        assert _structured(r)["results"][0]["value"] == 0.25
        return True

    assert run(_with_client(["--session", "demo"], body))


def test_errors_come_back_as_errors_and_the_server_keeps_serving():
    from mcp.shared.exceptions import MCPError

    async def body(s):
        # A bad property: a tool error with the located message (line, column, caret).
        r = await s.call_tool("check", {"model_text": COIN, "properties": ['P=? [ F "heads" '], "constants": "p=0.5"})
        assert _is_error(r)
        t = _text(r)
        assert "property 1:1:" in t and "^" in t, t
        # A model error, located in model_text.
        r = await s.call_tool("check", {"model_text": COIN.replace("(x'=2)", "(x'=)"), "properties": ['P=? [ F "heads" ]'], "constants": "p=0.5"})
        assert _is_error(r) and "model_text:5:" in _text(r), _text(r)
        # A file outside --root (none given): refused, nothing echoed.
        r = await s.call_tool("check", {"model_path": "/etc/passwd", "properties": ['P=? [ F "a" ]']})
        assert _is_error(r) and "--root" in _text(r)
        # An unknown tool: a JSON-RPC error.
        with pytest.raises(MCPError) as e:
            await s.call_tool("no_such_tool", {})
        assert "unknown tool" in str(e.value)
        # Still serving.
        r = await s.call_tool("gate", {"session": "a", "tool": "read_file", "args": {"path": "x"}})
        assert _structured(r)["verdict"] == "allow"
        return True

    assert run(_with_client(["--session", "a"], body))


def test_gate_decisions_match_the_cli():
    """The same actions through `augur monitor gate` and through the MCP server."""
    actions = (REPO / "models" / "monitor" / "actions.jsonl").read_text().splitlines()
    tmp = REPO / "target" / "mcp-test-monitor.json"
    subprocess.run(
        [AUGUR, "monitor", "compile", "models/safetydrift.tra", "--prop", 'P=? [ F<=5 "violated" ]', "-o", str(tmp)],
        cwd=REPO, capture_output=True, text=True, check=True,
    )
    gated = [json.loads(a) for a in actions if "tool" in json.loads(a)]
    cli = subprocess.run(
        [AUGUR, "monitor", "gate", "--monitor", str(tmp)], input="\n".join(json.dumps(a) for a in gated) + "\n",
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    cli = [json.loads(x) for x in cli]

    async def body(s):
        out = []
        for a in gated:
            r = await s.call_tool("gate", {"session": "demo", "tool": a["tool"], "args": a["args"]})
            out.append(_structured(r))
        return out

    mcp = run(_with_client(["--monitor", str(tmp), "--session", "demo"], body))
    assert len(cli) == len(mcp) == 4
    for c, m in zip(cli, mcp):
        for k in ("verdict", "probability", "bounds", "state", "reason", "step"):
            assert c[k] == m[k], (k, c, m)


class Raw:
    """The server over raw JSON-RPC lines."""

    def __init__(self, *args):
        self.p = subprocess.Popen(
            [AUGUR, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, cwd=REPO, bufsize=1,
        )
        # Lines are read on a thread, so that an answer the server never sends fails the test
        # after a timeout instead of hanging it.
        self.lines: queue.Queue = queue.Queue()

        def read():
            for line in self.p.stdout:
                self.lines.put(line)
            self.lines.put("")

        threading.Thread(target=read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        assert "result" in self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((msg if isinstance(msg, str) else json.dumps(msg)) + "\n")
        self.p.stdin.flush()

    def recv(self, timeout=60):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from the server within {timeout} s") from None
        assert line, "the server closed its output"
        return json.loads(line)

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.p.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=30) == 0


def _parse_error(m) -> bool:
    """JSON-RPC 2.0's answer to a line that is not JSON: -32700, "id": null."""
    return m.get("jsonrpc") == "2.0" and "id" in m and m["id"] is None and m["error"]["code"] == -32700


def _invalid_request(m) -> bool:
    """JSON-RPC 2.0's answer to JSON that is not a request: -32600, "id": null."""
    return m.get("jsonrpc") == "2.0" and "id" in m and m["id"] is None and m["error"]["code"] == -32600


def test_malformed_json_rpc_is_answered_and_the_server_keeps_serving():
    r = Raw("--session", "s")
    ids = iter(range(100, 10**6))

    def still_serving():
        i = next(ids)
        r.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "gate", "arguments": {"session": "s", "tool": "read_file", "args": {"path": "a"}}}})
        resp = r.recv()
        assert resp["id"] == i and resp["result"]["structuredContent"]["verdict"] in ("allow", "warn"), resp

    # Not JSON at all: a Parse error (-32700) with "id": null, and the server keeps serving.
    for bad in ["{this is not json", '{"jsonrpc": "2.0", "id": 7, "method": "tools/list"', "hello", '{"a": 1} {"b": 2}']:
        r.send(bad)
        m = r.recv()
        assert _parse_error(m), (bad, m)
        assert m["error"]["message"].startswith("Parse error"), m
        still_serving()
    # A blank line is not a message: no answer (the next line read is the gate's).
    r.send("")
    still_serving()
    # JSON that is not a JSON-RPC message: Invalid Request (-32600) with "id": null.
    for bad in ["[]", '{"foo": 1}', "42", '{"jsonrpc": "2.0", "id": 9}', '{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}']:
        r.send(bad)
        m = r.recv()
        assert _invalid_request(m), (bad, m)
        still_serving()
    # Well-formed requests the server cannot serve: answered with their id, so the client is
    # not left waiting (params that are not an object: Invalid Request).
    r.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "not an object"})
    m = r.recv()
    assert m["id"] == 1 and m["error"]["code"] == -32600, m
    r.send({"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {}})
    m = r.recv()
    assert m["id"] == 2 and m["error"]["code"] == -32601, m
    r.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "gate", "arguments": [1, 2]}})
    m = r.recv()
    assert m["id"] == 3 and m["error"]["code"] == -32602 and "must be a JSON object" in m["error"]["message"], m
    still_serving()
    r.close()


def test_the_error_answers_are_valid_json_rpc_errors_for_the_sdk():
    """The official SDK's JSON-RPC error model requires "id" (nullable, as JSON-RPC 2.0 says)
    and rejects an error without one, the form rmcp writes; the server's answers pass."""
    from mcp.types import JSONRPCError

    raw = Raw("--session", "g")
    for bad in ["{garbage", "[]"]:
        raw.send(bad)
        JSONRPCError.model_validate(raw.recv())
    raw.close()
    with pytest.raises(Exception):
        JSONRPCError.model_validate({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid request"}})


def test_soak_100000_gates_over_1000_sessions_in_bounded_memory():
    sessions, per = 1000, 100
    r = Raw("--harness", "--max-sessions", str(sessions))
    ids = iter(range(1, 10**9))

    def many(calls):
        """Send the calls in batches small enough for the pipes; the answers, by id."""
        out = {}
        for k in range(0, len(calls), 100):
            sent = []
            for name, args in calls[k:k + 100]:
                i = next(ids)
                sent.append(i)
                r.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}})
            for _ in sent:
                m = r.recv()
                out[m["id"]] = m
            assert set(sent) <= set(out)
        return list(out.values())

    opened = many([("open_session", {"session": f"s{i}"}) for i in range(sessions)])
    assert all(m["result"].get("isError") is not True for m in opened)
    # At the maximum a new session is refused; open ones stay.
    [m] = many([("open_session", {"session": "one-too-many"})])
    assert m["result"]["isError"] is True and "maximum" in m["result"]["content"][0]["text"]
    before = r.rss_kib()
    start = time.monotonic()
    tools = [("read_file", {"path": "/workspace/notes.txt"}), ("read_file", {"path": "/workspace/.env"}), ("send_email", {"recipients": ["a@outside.example"], "body": "x"})]
    verdicts = {}
    for rnd in range(per):
        tool, args = tools[rnd % len(tools)]
        for m in many([("gate", {"session": f"s{j}", "tool": tool, "args": args}) for j in range(sessions)]):
            v = m["result"]["structuredContent"]["verdict"]
            verdicts[v] = verdicts.get(v, 0) + 1
        assert time.monotonic() - start < 600, "the soak is bounded in time"
    after = r.rss_kib()
    assert sum(verdicts.values()) == sessions * per
    assert set(verdicts) <= {"allow", "warn", "pause", "block"}
    # Every session went read (allow), .env (warn), email outside (block, not applied), ...
    assert verdicts.get("block", 0) >= sessions * (per // 3)
    print(f"soak: {sessions * per} gates in {time.monotonic() - start:.1f} s; RSS {before} KiB -> {after} KiB; {verdicts}")
    # Memory is bounded: no growth per call beyond allocator slack.
    assert after - before < 16 * 1024, (before, after)
    r.close()
