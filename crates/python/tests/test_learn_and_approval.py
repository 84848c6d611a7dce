"""`augur_mc.learn` (traces -> a model usable with check, pac and Monitor.compile, equal to
what `augur learn` writes) and human approval of paused actions (`Session.approve` /
`Session.deny`, as the MCP server's harness-only `approve` / `deny`). Run by scripts/test."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

import augur_mc as augur

REPO = Path(__file__).resolve().parents[3]
AUGUR = os.environ.get("AUGUR_BIN", str(REPO / "target" / "debug" / "augur"))
MODELS = REPO / "models"

# `ok ok bad`, `ok`, `ok ok`: observed ok->ok 2, ok->bad 1; runs ended twice in ok, once in bad.
TRACES = [
    {"steps": [{"state": "ok"}, {"state": "ok"}, {"state": "bad"}]},
    {"steps": [{"state": "ok"}]},
    {"steps": [{"state": "ok"}, {"state": "ok"}]},
]


def cli(*args, stdin=None):
    p = subprocess.run([AUGUR, *args], cwd=REPO, capture_output=True, text=True, input=stdin)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_learn_from_a_list_of_traces_closed_form():
    # alpha = 0: ok -> ok 2/3, ok -> bad 1/3; bad (never left) is uniform over {ok, bad}.
    m = augur.learn(TRACES)
    assert isinstance(m, augur.LearnedModel) and isinstance(m, augur.Model)
    assert (m.states, m.state_names, m.category) == (2, ["ok", "bad"], None)
    [r] = augur.check(m, 'P=? [ X "bad" ]', all_states=True)
    assert r.states == [pytest.approx(1 / 3), pytest.approx(1 / 2)]
    # With the end state DONE: ok -> (ok 2, bad 1, DONE 2)/5, so P(F bad) = (1/5)/(3/5) = 1/3;
    # with alpha = 1, ok -> (3, 2, 3)/8 and P(F bad) = (2/8)/(5/8) = 2/5.
    e0 = augur.learn(TRACES, end_state="DONE")
    assert e0.state_names == ["ok", "bad", "DONE"] and "DONE" in e0.labels
    assert augur.check(e0, 'P=? [ F "bad" ]')[0].value == pytest.approx(1 / 3, abs=1e-12)
    e1 = augur.learn(TRACES, alpha=1.0, end_state="DONE")
    assert augur.check(e1, 'P=? [ F "bad" ]')[0].value == pytest.approx(2 / 5, abs=1e-12)
    assert augur.check(e1, 'P=? [ F "DONE" ]')[0].value == pytest.approx(1.0, abs=1e-12)
    s = e1.summary
    assert (s["traces"], s["steps"], s["states"], s["initial"]) == (3, 6, 3, ["ok"])


def test_learn_equals_the_cli(tmp_path):
    """Same options, same model file: by category, with an abstraction spec and smoothing."""
    traces, spec = "models/safetydrift/traces.jsonl", "models/safetydrift/spec.toml"
    out = tmp_path / "sd.json"
    cli("learn", traces, "--abstraction", spec, "--by-category", "--alpha", "0.1", "-o", str(out))
    models = augur.learn(traces, abstraction=spec, alpha=0.1, by_category=True)
    assert sorted(models) == ["benign", "injected"]
    for cat, m in models.items():
        expected = json.loads((tmp_path / f"sd.{cat}.json").read_text())
        assert m.to_dict() == expected
        assert m.category == cat
        # Usable with check, pac and save like a file written by the CLI.
        got = augur.check(m, 'P=? [ F<=5 "VIOLATED" ]')[0]
        want = json.loads(cli("check", str(tmp_path / f"sd.{cat}.json"), "--prop", 'P=? [ F<=5 "VIOLATED" ]', "--json"))
        assert got.value == want["results"][0]["value"]
        assert augur.pac(m, 0.1, 0.05) == augur.pac(tmp_path / f"sd.{cat}.json", 0.1, 0.05)
        m.save(tmp_path / f"py.{cat}.json")
        assert json.loads((tmp_path / f"py.{cat}.json").read_text()) == expected
    # The spec as TOML text, the other options.
    text = (REPO / spec).read_text()
    m = augur.learn(REPO / traces, abstraction=text, final_absorbing=True, order=1, end_state="DONE")
    assert m.states == 61 and m.state_names[-1] == "DONE"
    cli("learn", traces, "--abstraction", spec, "--final-absorbing", "--end-state", "DONE", "-o", str(out))
    assert m.to_dict()["transitions"] == json.loads(out.read_text())["transitions"]


def test_a_learned_model_compiles_a_monitor(tmp_path):
    """A monitor compiled from the learned models in memory decides as one compiled from the
    files `augur learn` writes (the 60-state (d, t, r) models, one table per category)."""
    traces, spec = "models/safetydrift/traces.jsonl", "models/safetydrift/spec.toml"
    models = augur.learn(traces, abstraction=spec, alpha=0.1, by_category=True)
    prop = 'P=? [ F<=5 "VIOLATED" ]'
    mine = augur.Monitor.compile([(c, m) for c, m in models.items()], prop)
    out = tmp_path / "sd.json"
    cli("learn", traces, "--abstraction", spec, "--by-category", "--alpha", "0.1", "-o", str(out))
    files = augur.Monitor.compile([f"{c}={tmp_path / f'sd.{c}.json'}" for c in models], prop)
    actions = [
        ("read_file", {"path": "/workspace/customers.csv"}),
        ("read_file", {"path": "/workspace/.env"}),
        ("send_email", {"recipients": ["mark.black@gmail.com"], "body": "summary"}),
    ]
    for cat in models:
        a, b = mine.session(category=cat), files.session(category=cat)
        for tool, args in actions:
            assert a.gate(tool, args).to_dict() == b.gate(tool, args).to_dict()


def test_learn_errors_are_exceptions(tmp_path):
    with pytest.raises(augur.ParameterError) as e:
        augur.learn(TRACES, end_state="ok")
    assert "invalid end state `ok`: the learned model already has a state of that name" in str(e.value)
    with pytest.raises(augur.ParameterError):
        augur.learn(TRACES, alpha=-1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"steps": [{"state": "a"}]}\n{"steps": \n')
    with pytest.raises(augur.ParseError) as e:
        augur.learn(bad)
    assert (e.value.file, e.value.line) == (str(bad), 2)
    assert augur.learn(bad, skip_invalid=True).summary["skipped"] == 1
    with pytest.raises(augur.ModelError):
        augur.learn(tmp_path / "missing.jsonl")


def test_learn_intervals_holds_the_true_value_and_equals_the_cli(tmp_path):
    """`learn(..., intervals=True, confidence=c)`: the interval DTMC `augur learn --intervals`
    writes; its [Pmin, Pmax] of F "unsafe" holds the known chain's 17/59 (models/agent4)."""
    traces, spec = tmp_path / "a.jsonl", "models/agent4/spec.toml"
    cli("simulate", "models/agent4/agent4.pm", "-n", "1000", "--max-steps", "1000", "--seed", "1", "-o", str(traces))
    m = augur.learn(traces, abstraction=spec, intervals=True, confidence=0.9)
    assert m.confidence == 0.9 and augur.learn(traces, abstraction=spec).confidence is None
    assert m.summary["intervals"]["pairs"] == 6
    lo = augur.check(m, 'Pmin=? [ F "unsafe" ]')[0].bounds[0]
    hi = augur.check(m, 'Pmax=? [ F "unsafe" ]')[0].bounds[1]
    assert lo <= 17 / 59 <= hi and hi - lo < 0.25
    with pytest.raises(augur.AugurError):
        augur.check(m, 'P=? [ F "unsafe" ]')  # an interval model: say Pmin or Pmax
    out = tmp_path / "m.json"
    cli("learn", str(traces), "--abstraction", spec, "--intervals", "--confidence", "0.9", "-o", str(out))
    want = json.loads(out.read_text())
    got = m.to_dict()
    assert got["intervals"] == want["intervals"]
    assert got["metadata"]["learned"]["intervals"] == want["metadata"]["learned"]["intervals"]
    # The default level is 0.95; a level outside (0, 1), or smoothing, is an error.
    assert augur.learn(traces, abstraction=spec, intervals=True).confidence == 0.95
    for bad in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(augur.ParameterError) as e:
            augur.learn(TRACES, intervals=True, confidence=bad)
        assert "strictly between 0 and 1" in str(e.value)
    with pytest.raises(augur.ParameterError):
        augur.learn(TRACES, intervals=True, alpha=1.0)


PAUSE_AT_02 = 'version = 1\nthresholds = [ { at = 0.95, verdict = "block" }, { at = 0.2, verdict = "pause" } ]\n'
ENV = {"path": "/workspace/.env"}


def test_approve_and_deny_a_paused_action():
    s = augur.Monitor.default().session(policy_text=PAUSE_AT_02)
    d = s.gate("read_file", ENV)
    assert d.action is augur.Action.PAUSE and d.pause_id == "pause-1"
    assert s.pending_pause == ("pause-1", "read_file") and s.state == "safe"
    assert s.approve("pause-1") is True
    assert s.state == d.state != "safe" and s.pending_pause is None
    assert s.summary()["overridden"] == 1
    with pytest.raises(augur.ParameterError) as e:
        s.approve("pause-1")  # answered already
    assert "is not the session's pending pause" in str(e.value)
    # Denied: nothing moves.
    d2 = s.gate("send_email", {"recipients": ["a@outside.example"], "body": "x"})
    assert d2.action >= augur.Action.PAUSE
    if d2.action is augur.Action.PAUSE:
        before = s.state
        assert s.deny(d2.pause_id) is False and s.state == before
    # A later gate supersedes a pending pause (its id can no longer be answered); under this
    # policy the later gate pauses too, with a new id.
    t = augur.Monitor.default().session(policy_text=PAUSE_AT_02)
    p = t.gate("read_file", ENV)
    q = t.gate("get_current_day", {})
    assert q.action is augur.Action.PAUSE and q.pause_id == "pause-2"
    assert t.pending_pause == ("pause-2", "get_current_day")
    with pytest.raises(augur.ParameterError):
        t.deny(p.pause_id)
    with pytest.raises(augur.ParameterError):
        t.approve("pause-made-up")
    # Allowed actions carry no pause id and leave nothing pending.
    u = augur.Monitor.default().session()
    a = u.gate("get_current_day", {})
    assert a.action is augur.Action.ALLOW and a.pause_id is None and u.pending_pause is None


def test_approval_matches_the_mcp_server(tmp_path):
    """The same session through `augur mcp --harness` (the MCP SDK's client): the same
    verdicts, pause ids, answers and states."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    policy = tmp_path / "policy.toml"
    policy.write_text(PAUSE_AT_02)
    script = [
        ("gate", "read_file", ENV),
        ("approve", None, None),
        ("gate", "write_file", {"path": "/tmp/a.txt", "content": "..."}),
        ("deny", None, None),
        ("gate", "read_file", {"path": "/workspace/notes.txt"}),
    ]

    def local():
        s = augur.Monitor.default().session(policy_text=PAUSE_AT_02)
        out, last = [], None
        for op, tool, args in script:
            if op == "gate":
                last = s.gate(tool, args)
                out.append((last.action.value, last.pause_id, last.state))
            elif last is not None and last.pause_id is not None:
                changed = s.approve(last.pause_id) if op == "approve" else s.deny(last.pause_id)
                out.append((op, changed, s.state))
        return out

    async def remote():
        params = StdioServerParameters(
            command=AUGUR,
            args=["mcp", "--harness", "--session", "s", "--policy", str(policy)],
            cwd=str(REPO),
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as c:
                await c.initialize()
                out, last = [], None
                for op, tool, args in script:
                    if op == "gate":
                        r = await c.call_tool("gate", {"session": "s", "tool": tool, "args": args})
                        last = _structured(r)
                        out.append((last["verdict"], last.get("pause_id"), last["state"]))
                    elif last is not None and last.get("pause_id") is not None:
                        r = await c.call_tool(op, {"session": "s", "pause_id": last["pause_id"]})
                        v = _structured(r)
                        out.append((op, v["changed"], v["state"]))
                return out

    mine = local()
    assert mine[0][0] == "pause" and mine[1] == ("approve", True, mine[0][2])
    assert mine == asyncio.run(asyncio.wait_for(remote(), timeout=120))


def _structured(r):
    s = getattr(r, "structured_content", None) or getattr(r, "structuredContent", None)
    return s if s is not None else json.loads(r.content[0].text)


def test_robust_and_explained_monitor_from_python(tmp_path):
    """`Monitor.compile(..., robust=True, confidence=, explain=True)`: the sections of
    `augur monitor compile --robust --explain`, from a model learned in memory or its file
    (docs/robust.md, "The monitor on the robust bound": 0.2436 point, 0.3343 bound)."""
    traces, spec = tmp_path / "a.jsonl", "models/agent4/spec.toml"
    cli("simulate", "models/agent4/agent4.pm", "-n", "1000", "--max-steps", "1000", "--seed", "1", "-o", str(traces))
    prop = 'P=? [ F<=5 "unsafe" ]'
    m = augur.learn(traces, abstraction=spec)
    mine = augur.Monitor.compile(m, prop, abstraction=spec, robust=True, confidence=0.95, explain=True)
    out = tmp_path / "point.json"
    cli("learn", str(traces), "--abstraction", spec, "-o", str(out))
    files = augur.Monitor.compile(str(out), prop, abstraction=spec, robust=True, explain=True)
    start = {"w": False, "u": False, "d": False}
    a = mine.session().gate(state=start).to_dict()
    b = files.session().gate(state=start).to_dict()
    assert a == b
    assert a["verdict"] == "warn" and a["confidence"] == 0.95
    assert abs(a["probability"] - 0.243600) < 1e-6 and abs(a["bound"] - 0.334295) < 1e-6
    assert a["continuation"]["action"] == "a step from {} to {unsafe}"
    assert abs(a["continuation"]["share"] - a["continuation"]["probability"] / a["probability"]) < 1e-12
    # Without the options: no bound, no continuation, the point value decides (allow).
    plain = augur.Monitor.compile(m, prop, abstraction=spec).session().gate(state=start).to_dict()
    assert plain["verdict"] == "allow" and "bound" not in plain and "continuation" not in plain
    with pytest.raises(augur.ParameterError):
        augur.Monitor.compile(m, prop, abstraction=spec, confidence=0.9)
    # An interval model keeps the confidence it was learned with.
    iv = augur.learn(traces, abstraction=spec, intervals=True, confidence=0.9)
    d = augur.Monitor.compile(iv, prop, abstraction=spec, robust=True).session().gate(state=start).to_dict()
    assert d["confidence"] == 0.9 and d["bound"] >= d["probability"]
    with pytest.raises(augur.AugurError):
        augur.Monitor.compile(iv, prop, abstraction=spec, robust=True, confidence=0.95)
