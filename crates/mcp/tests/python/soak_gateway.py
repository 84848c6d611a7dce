"""Soak of the gateway (`augur mcp --upstream`): N proxied calls, one at a time, through one
gateway to an upstream that answers at once (a raw JSON-RPC server in this file, so that the
upstream costs little). Prints the gateway's resident memory after the first 1,000 calls and
after all of them, and the distribution of the latency the gateway adds per call, as the
gateway measures it (`gateway_us` of the audit log: from the request reaching the gateway's
handler to its hand-over to the upstream's client, plus from the upstream's answer to the
answer leaving the handler). Exit code 1 when memory grew by more than 10% or p99 > 200 us.

    python crates/mcp/tests/python/soak_gateway.py [--calls 100000] [--augur target/release/augur]

Not collected by pytest (run by hand; the command and its numbers are in docs/mcp.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


def upstream() -> None:
    """A minimal MCP server on stdin/stdout: initialize, tools/list, tools/call (read_file)."""
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        m = msg.get("method")
        if m == "initialize":
            res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                   "serverInfo": {"name": "soak", "version": "1"}}
        elif m == "tools/list":
            res = {"tools": [{"name": "read_file", "description": "read a file",
                              "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}
        elif m == "tools/call":
            res = {"content": [{"type": "text", "text": "contents of notes.txt: hello"}], "isError": False}
        elif m == "ping":
            res = {}
        else:
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}) + "\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
        out.flush()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--augur", default=os.environ.get("AUGUR_BIN", str(REPO / "target/debug/augur")))
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    audit = tmp / "audit.jsonl"
    cmd = [a.augur, "mcp", "--audit", str(audit),
           "--upstream", f"soak={sys.executable} {Path(__file__).resolve()} --upstream"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, bufsize=1)

    def rpc(i: int, method: str, params: dict | None = None) -> dict:
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        while True:
            ans = json.loads(p.stdout.readline())
            if ans.get("id") == i:
                return ans

    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "soak", "version": "1"}})
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    p.stdin.flush()
    args = {"name": "read_file", "arguments": {"path": "notes.txt"}}
    t = time.monotonic()
    rss_1k = None
    for i in range(1, a.calls + 1):
        ans = rpc(i, "tools/call", args)
        if ans.get("result", {}).get("isError"):
            print("error result:", ans, file=sys.stderr)
            return 1
        if i == 1000:
            rss_1k = rss_kib(p.pid)
    rss_end = rss_kib(p.pid)
    wall = time.monotonic() - t
    p.stdin.close()
    p.wait(timeout=30)
    us = sorted(json.loads(l)["gateway_us"] for l in audit.read_text().splitlines())
    n = len(us)
    q = lambda f: us[min(n - 1, int(f * n))]
    growth = (rss_end - rss_1k) / rss_1k
    print(f"calls: {n}, wall {wall:.1f} s ({wall / n * 1e6:.0f} us per call round trip, Python client and upstream included)")
    print(f"resident memory after 1,000 calls: {rss_1k} KiB; after {n:,}: {rss_end} KiB ({growth:+.1%})")
    print(f"gateway_us: p50 {q(0.5)}, p90 {q(0.9)}, p99 {q(0.99)}, p99.9 {q(0.999)}, max {us[-1]}")
    ok = growth <= 0.10 and q(0.99) <= 200
    print("PASS" if ok else "FAIL (memory growth > 10% or p99 > 200 us)")
    return 0 if ok else 1


if __name__ == "__main__":
    if "--upstream" in sys.argv:
        upstream()
    else:
        sys.exit(main())
