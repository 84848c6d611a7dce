#!/usr/bin/env python3
"""Regenerate the example traces in models/microwave and models/safetydrift (seeded).

These are synthetic agent runs written for Augur's examples, not data from the papers:
a random household agent for Pro2Guard's fork-in-microwave scenario, and a random tool-using
agent whose actions move SafetyDrift's (d, t, r) state. Run from the repository root:

    python3 models/make_example_traces.py
"""
import json
import random


def microwave(rng, i):
    s = {"fork_at": "counter", "door_open": False, "power": False, "task_done": False}
    steps = [dict(s)]
    for _ in range(14):
        acts = []
        if s["fork_at"] == "counter":
            acts += [("pick", 3)]
        if not s["door_open"] and not s["power"]:
            acts += [("open", 2)]
        if s["door_open"]:
            acts += [("close", 2)]
        if s["fork_at"] == "hand" and s["door_open"]:
            acts += [("put_in", 2)]
        if s["fork_at"] == "hand":
            acts += [("to_sink", 2), ("put_down", 1)]
        if not s["door_open"] and not s["power"]:
            acts += [("power_on", 1)]
        if s["power"]:
            acts += [("power_off", 2)]
        if s["fork_at"] == "microwave" and s["door_open"]:
            acts += [("take_out", 3)]
        if s["fork_at"] == "sink":
            acts += [("finish", 4)]
        names = [a for a, _ in acts]
        a = rng.choices(names, [w for _, w in acts])[0]
        if a == "pick":
            s["fork_at"] = "hand"
        elif a == "open":
            s["door_open"] = True
        elif a == "close":
            s["door_open"] = False
        elif a == "put_in":
            s["fork_at"] = "microwave"
        elif a == "to_sink":
            s["fork_at"] = "sink"
        elif a == "put_down":
            s["fork_at"] = "counter"
        elif a == "power_on":
            s["power"] = True
        elif a == "power_off":
            s["power"] = False
        elif a == "take_out":
            s["fork_at"] = "hand"
        elif a == "finish":
            s["task_done"] = True
        steps.append(dict(s))
        if s["task_done"] or (s["fork_at"] == "microwave" and s["power"]):
            break
    cat = "heat_food" if i % 2 == 0 else "clean_fork"
    return {"id": f"mw-{i}", "category": cat, "steps": steps}


D = ["NONE", "PUBLIC", "INTERNAL", "SENSITIVE", "CREDENTIALS"]
T = ["READ_ONLY", "FILE_WRITE", "CODE_EXEC", "NETWORK"]
R = ["FULLY_REVERSIBLE", "PARTIALLY", "IRREVERSIBLE"]


def safetydrift(rng, i):
    injected = i % 3 == 0
    d, t, r = 0, 0, 0
    steps = [{"d": D[d], "t": T[t], "r": R[r]}]
    for _ in range(10):
        # An action's implications (d', t', r'): injected runs reach for secrets and the network.
        if injected:
            dd = rng.choices(range(5), [3, 2, 3, 3, 2])[0]
            tt = rng.choices(range(4), [3, 2, 2, 3])[0]
            rr = rng.choices(range(3), [4, 2, 2])[0]
        else:
            dd = rng.choices(range(5), [5, 4, 3, 1, 0.3])[0]
            tt = rng.choices(range(4), [6, 3, 1, 1])[0]
            rr = rng.choices(range(3), [7, 2, 1])[0]
        d, t, r = max(d, dd), max(t, tt), rr
        steps.append({"d": D[d], "t": T[t], "r": R[r]})
        if d >= 3 and t >= 3 and r == 2:  # VIOLATED: absorbing, the run ends
            break
        if rng.random() < 0.15:
            break
    return {"id": f"sd-{i}", "category": "injected" if injected else "benign", "steps": steps}


def write(path, traces):
    with open(path, "w") as f:
        for t in traces:
            f.write(json.dumps(t) + "\n")


if __name__ == "__main__":
    rng = random.Random(20250701)
    mw = [microwave(rng, i) for i in range(200)]
    # One trace with an impossible move (the fork leaves a closed microwave): `augur learn`
    # counts and reports it, and never uses it.
    mw.append({"id": "mw-glitch", "category": "clean_fork", "steps": [
        {"fork_at": "counter", "door_open": False, "power": False, "task_done": False},
        {"fork_at": "hand", "door_open": False, "power": False, "task_done": False},
        {"fork_at": "hand", "door_open": True, "power": False, "task_done": False},
        {"fork_at": "microwave", "door_open": True, "power": False, "task_done": False},
        {"fork_at": "microwave", "door_open": False, "power": False, "task_done": False},
        {"fork_at": "sink", "door_open": False, "power": False, "task_done": False},
        {"fork_at": "sink", "door_open": False, "power": False, "task_done": True}]})
    write("models/microwave/traces.jsonl", mw)
    rng = random.Random(20250702)
    write("models/safetydrift/traces.jsonl", [safetydrift(rng, i) for i in range(300)])
