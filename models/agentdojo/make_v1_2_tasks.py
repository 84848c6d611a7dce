#!/usr/bin/env python3
"""Write agentdojo_v1.2_tasks.json: AgentDojo v1.2's suites in the shape of
agentdojo_v1_tasks.json (per suite: its tool names, its injection tasks' goal and ground-truth
calls, its user tasks' prompt and ground-truth function names).

Run once, by hand, with the AgentDojo package installed (`pip install agentdojo`; written with
agentdojo 0.1.35); the result is committed and no test needs the package:

    python3 models/agentdojo/make_v1_2_tasks.py > models/agentdojo/agentdojo_v1.2_tasks.json

Ground-truth calls are the package's own (`InjectionTask.ground_truth` on the suite's default
environment with the injections applied). The package leaves them empty for workspace
`injection_task_6`..`13` (new in v1.2; their `security()` checks the final state only): for
those, the calls are derived from the constants the task class declares and its goal names,
and marked `"ground_truth_source": "derived from the task's constants"`: a `send_email` to its
`_RECIPIENT` (with `_EMAIL_SUBJECT` / `_EMAIL_BODY` when declared; task 13 sends `_EMAIL_BODY`,
which carries `_PHISHING_LINK`, to the day's participants, so its call names no recipient).
The converter reads the identifiers of these arguments (the address, the link) like any other.
"""
import json
import re
import sys

from agentdojo.task_suite.load_suites import get_suites


def key(task_id):
    m = re.search(r"(\d+)$", task_id)
    return (task_id.rstrip("0123456789"), int(m.group(1)) if m else -1)


def plain(v):
    """JSON-ready arguments (dates and enums as text)."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def derive(cls):
    """Ground-truth calls from a task class's declared constants (see the module docs)."""
    consts = {k: v for k, v in vars(cls).items() if k.startswith("_") and not k.startswith("__")}
    args = {}
    if isinstance(consts.get("_RECIPIENT"), str):
        args["recipients"] = [consts["_RECIPIENT"]]
    if isinstance(consts.get("_EMAIL_SUBJECT"), str):
        args["subject"] = consts["_EMAIL_SUBJECT"]
    if isinstance(consts.get("_EMAIL_BODY"), str):
        args["body"] = consts["_EMAIL_BODY"]
    elif isinstance(consts.get("_PHISHING_LINK"), str):
        args["body"] = consts["_PHISHING_LINK"]
    return [{"function": "send_email", "args": args}] if args else []


def main():
    out = {}
    for name, suite in sorted(get_suites("v1.2").items()):
        env = suite.load_and_inject_default_environment({})
        injection = {}
        for tid in sorted(suite.injection_tasks, key=key):
            task = suite.injection_tasks[tid]
            calls = task.ground_truth(env.model_copy(deep=True))
            entry = {
                "goal": task.GOAL,
                "ground_truth": [
                    {"function": c.function, "args": plain(dict(c.args))} for c in calls
                ],
            }
            if not calls:
                derived = derive(type(task))
                if derived:
                    entry["ground_truth"] = derived
                    entry["ground_truth_source"] = "derived from the task's constants"
            injection[tid] = entry
        user = {}
        for tid in sorted(suite.user_tasks, key=key):
            task = suite.user_tasks[tid]
            calls = task.ground_truth(env.model_copy(deep=True))
            user[tid] = {
                "prompt": task.PROMPT,
                "ground_truth_functions": [{"function": c.function} for c in calls],
            }
        out[name] = {
            "tools": [t.name for t in suite.tools],
            "injection_tasks": injection,
            "user_tasks": user,
        }
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
