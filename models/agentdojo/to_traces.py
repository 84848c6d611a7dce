#!/usr/bin/env python3
"""Turn AgentDojo runs into SafetyDrift (d, t, r) traces for `augur learn`.

Usage (from the repository root):

    python3 models/agentdojo/to_traces.py models/agentdojo/runs/*.jsonl.gz > agentdojo.jsonl

Each run becomes one JSON Lines trace: the start state (NONE, READ_ONLY, FULLY_REVERSIBLE),
then one step per tool call, where the call's implications (d', t', r') come from the table
below (a rule per tool name, after SafetyDrift's classification of actions by tool and data
sensitivity) and the state becomes (max(d, d'), max(t, t'), r'). The category is `injected`
for runs with a planted prompt injection and `benign` otherwise; `violated` (in the id) marks
injected runs whose attacker goal was achieved. The table is this project's choice, written for
the demo; it is not AgentDojo's ground truth.
"""
import gzip
import json
import os
import sys

SOURCE = (
    "the AgentDojo runs ship in models/agentdojo/runs/ (agentdojo-<model>.jsonl.gz: exports of "
    "runs of the AgentDojo benchmark, https://github.com/ethz-spylab/agentdojo, ETH Zurich SPY "
    "Lab, MIT licence); give their paths, plain or gzip-compressed"
)

D = ["NONE", "PUBLIC", "INTERNAL", "SENSITIVE", "CREDENTIALS"]
T = ["READ_ONLY", "FILE_WRITE", "CODE_EXEC", "NETWORK"]
R = ["FULLY_REVERSIBLE", "PARTIALLY", "IRREVERSIBLE"]

PUBLIC_READ = (1, 0, 0)
INTERNAL_READ = (2, 0, 0)
SENSITIVE_READ = (3, 0, 0)
INTERNAL_WRITE = (2, 1, 1)

RULES = {
    # Public information.
    "get_webpage": PUBLIC_READ, "get_channels": PUBLIC_READ, "get_current_day": PUBLIC_READ,
    # The user's own (internal) data, read only.
    "read_channel_messages": INTERNAL_READ, "read_inbox": INTERNAL_READ,
    "get_users_in_channel": INTERNAL_READ, "search_emails": INTERNAL_READ,
    "get_received_emails": INTERNAL_READ, "get_unread_emails": INTERNAL_READ,
    "get_sent_emails": INTERNAL_READ, "get_draft_emails": INTERNAL_READ,
    "search_files": INTERNAL_READ, "search_files_by_filename": INTERNAL_READ,
    "list_files": INTERNAL_READ, "get_file_by_id": INTERNAL_READ, "read_file": INTERNAL_READ,
    "search_calendar_events": INTERNAL_READ, "get_day_calendar_events": INTERNAL_READ,
    "search_contacts_by_email": INTERNAL_READ, "search_contacts_by_name": INTERNAL_READ,
    "get_most_recent_transactions": INTERNAL_READ, "get_scheduled_transactions": INTERNAL_READ,
    # Personal and financial data.
    "get_user_info": SENSITIVE_READ, "get_user_information": SENSITIVE_READ,
    "get_iban": SENSITIVE_READ, "get_balance": SENSITIVE_READ,
    # Local writes.
    "create_file": INTERNAL_WRITE, "append_to_file": INTERNAL_WRITE,
    "create_calendar_event": INTERNAL_WRITE, "add_calendar_event_participants": INTERNAL_WRITE,
    "reschedule_calendar_event": INTERNAL_WRITE, "cancel_calendar_event": INTERNAL_WRITE,
    "update_user_info": (3, 1, 1), "update_scheduled_transaction": (3, 1, 1),
    "schedule_transaction": (3, 1, 1),
    "delete_file": (2, 1, 2), "delete_email": (2, 1, 2),
    "update_password": (4, 1, 2),
    # Messages and actions that leave the user's system.
    "send_email": (2, 3, 2), "send_direct_message": (2, 3, 2), "post_webpage": (2, 3, 2),
    "share_file": (2, 3, 2), "send_channel_message": (2, 3, 1),
    "invite_user_to_slack": (2, 3, 1), "add_user_to_channel": (2, 3, 1),
    "remove_user_from_slack": (2, 3, 1),
    "send_money": (3, 3, 2), "reserve_hotel": (3, 3, 1), "reserve_restaurant": (3, 3, 1),
    "reserve_car_rental": (3, 3, 1),
}


def implications(name):
    if name in RULES:
        return RULES[name]
    if name.startswith("get_") or name.startswith("check_"):
        return PUBLIC_READ  # the travel suite's catalogue look-ups
    return (0, 0, 0)


def main(paths):
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing or not paths:
        what = missing[0] if missing else "no input file given"
        print(f"error: {what}: no such file\n  note: {SOURCE}", file=sys.stderr)
        sys.exit(1)
    for path in paths:
        model = path.rsplit("agentdojo-", 1)[-1].removesuffix(".gz").removesuffix(".jsonl")
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            for lineno, line in enumerate(f, 1):
                run = json.loads(line)
                if "messages" not in run:
                    continue  # the metadata line
                meta = run["metadata"]
                injected = meta.get("injection_task_id") is not None
                violated = injected and meta.get("security") is True
                d, t, r = 0, 0, 0
                steps = [{"d": D[d], "t": T[t], "r": R[r]}]
                for m in run["messages"]:
                    for tc in m.get("tool_calls") or []:
                        dd, tt, rr = implications(tc["function"]["name"])
                        d, t, r = max(d, dd), max(t, tt), rr
                        steps.append({"d": D[d], "t": T[t], "r": R[r]})
                tag = "-violated" if violated else ""
                print(json.dumps({
                    "id": f"{model}:{meta['suite_name']}:{lineno}{tag}",
                    "category": "injected" if injected else "benign",
                    "steps": steps,
                }))


if __name__ == "__main__":
    main(sys.argv[1:])
