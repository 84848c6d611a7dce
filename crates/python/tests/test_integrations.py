"""The LangChain and OpenAI Agents SDK wrappers gate what they should (no network, no LLM:
the wrapped tools are called directly with arguments)."""

from __future__ import annotations

import asyncio
import json

import pytest

import augur_mc as augur
from augur_mc.integrations import guard_langchain_tool, guarded_function_tool

SENT = []


def send_email(recipients: list, body: str) -> str:
    """Send an email."""
    SENT.append((tuple(recipients), body))
    return "sent"


def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def test_langchain_tool_wrapper_blocks_with_a_tool_exception():
    from langchain_core.tools import StructuredTool, ToolException

    session = augur.Monitor.default().session()
    read = guard_langchain_tool(StructuredTool.from_function(read_file), session)
    email = guard_langchain_tool(StructuredTool.from_function(send_email), session)
    assert read.invoke({"path": "/workspace/notes.txt"}) == "contents of /workspace/notes.txt"
    assert read.invoke({"path": "/workspace/.env"}).startswith("contents of")  # warn: runs
    SENT.clear()
    # LangChain turns the ToolException into the tool's answer (handle_tool_error).
    out = email.invoke({"recipients": ["mark.black@gmail.com"], "body": "the keys"})
    assert "block" in out and "send_email" in out, out
    assert SENT == []
    email.handle_tool_error = False
    with pytest.raises(ToolException):
        email.invoke({"recipients": ["mark.black@gmail.com"], "body": "the keys"})
    assert SENT == []
    assert session.summary()["block"] == 2


def test_agents_sdk_function_tool_refuses_blocked_calls():
    from agents.tool_context import ToolContext

    session = augur.Monitor.default().session()
    email = guarded_function_tool(send_email, session)
    read = guarded_function_tool(read_file, session)

    def call(tool, args):
        text = json.dumps(args)
        ctx = ToolContext(context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=text)
        return asyncio.run(tool.on_invoke_tool(ctx, text))

    SENT.clear()
    assert call(read, {"path": "/workspace/.env"}) == "contents of /workspace/.env"
    out = call(email, {"recipients": ["mark.black@gmail.com"], "body": "the keys"})
    assert out.startswith("refused by the monitor:") and "block" in out, out
    assert SENT == []
