"""Gating agent tools with a monitor session, for LangChain and the OpenAI Agents SDK.

Each wrapper gates the call with the tool's name and arguments before running it, and
observes the tool's result after it ran (:meth:`augur_mc.Session.observe` with source
``"tool"``: untrusted text, unless the policy's ``trusted_tools`` names the tool), so that a
later call whose destination came from that result is seen for what it is. ALLOW and WARN run
the tool; PAUSE and BLOCK refuse it with the decision's reason, without running it:

- LangChain: the guarded tool raises ``ToolException(reason)``, as any LangChain tool reports
  a failure. What the caller then sees is LangChain's own rule: with the tool's
  ``handle_tool_error`` false (LangChain's default; the guarded tool takes the wrapped tool's
  setting) ``invoke`` raises it; with ``handle_tool_error=True`` the reason comes back as the
  tool's output, for the model to read (LangGraph's ``ToolNode`` does the same by default);
- the Agents SDK: the refusal ``"refused by the monitor: <reason>"`` is the tool's output.

Neither framework is a dependency of this package: each is imported when its wrapper is used.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any, Callable, Dict, Optional

from . import Action, Decision, Session


class Refused(Exception):
    """An action the monitor paused or blocked."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


def _gate(session: Session, name: str, args: Any) -> Decision:
    return session.gate(name, args)


def result_text(result: Any) -> str:
    """The text of a tool's result as the monitor observes it: a string as it is; a LangChain
    message or document by its ``content`` / ``page_content``; anything else as JSON (objects
    that JSON cannot write by ``str``)."""
    if isinstance(result, str):
        return result
    if isinstance(result, (bytes, bytearray)):
        return bytes(result).decode("utf-8", "replace")
    for attr in ("content", "page_content"):
        inner = getattr(result, attr, None)
        if inner is not None and not callable(inner):
            return result_text(inner)
    try:
        return json.dumps(result, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


def _observe(session: Session, name: str, result: Any, args: Any) -> None:
    # With the call's arguments: a call on a source the user named delegates its result.
    session.observe("tool", result_text(result), tool=name, args=_plain(args))


def _plain(args: Any) -> Any:
    """The call's arguments as JSON can write them (objects it cannot by ``str``)."""
    return json.loads(json.dumps(args, default=str))


def guard_langchain_tool(tool: Any, session: Session, refuse_at: Action = Action.PAUSE) -> Any:
    """A LangChain ``BaseTool`` that gates every call of ``tool`` through ``session`` and
    observes each result; a decision at or above ``refuse_at`` raises
    ``ToolException(reason)`` without running ``tool`` (returned as the tool's output instead
    when ``handle_tool_error`` is set, as for any LangChain tool; the guarded tool takes
    ``tool``'s setting).

    >>> guarded = guard_langchain_tool(send_email_tool, monitor.session())  # doctest: +SKIP
    """
    from langchain_core.tools import BaseTool, ToolException

    inner = tool

    class Guarded(BaseTool):  # type: ignore[misc, valid-type]
        name: str = inner.name
        description: str = inner.description
        args_schema: Any = inner.args_schema
        handle_tool_error: Any = getattr(inner, "handle_tool_error", False)

        def _call(self, args: Any, kwargs: Any) -> Any:
            """The gated call's arguments (a dict) and the input for ``inner``."""
            kwargs.pop("run_manager", None)
            call = dict(kwargs)
            if args:
                call.update({f"arg{i}": a for i, a in enumerate(args)})
            d = _gate(session, inner.name, call)
            if d.action >= refuse_at:
                raise ToolException(d.reason)
            return call, (call if not args else args[0])

        def _run(self, *args: Any, **kwargs: Any) -> Any:
            call, tool_input = self._call(args, kwargs)
            result = inner.invoke(tool_input)
            _observe(session, inner.name, result, call)
            return result

        async def _arun(self, *args: Any, **kwargs: Any) -> Any:
            call, tool_input = self._call(args, kwargs)
            result = await inner.ainvoke(tool_input)
            _observe(session, inner.name, result, call)
            return result

    return Guarded()


def guarded_function_tool(
    func: Callable[..., Any],
    session: Session,
    name: Optional[str] = None,
    refuse_at: Action = Action.PAUSE,
) -> Any:
    """An OpenAI Agents SDK ``FunctionTool`` for ``func`` (a function or a coroutine
    function) that gates each call through ``session`` and observes each result; a refused
    call returns ``"refused by the monitor: <reason>"`` to the model instead of running. The
    gated plain function is ``guarded.__wrapped_gated__``."""
    from agents import function_tool

    tool_name = name or func.__name__
    sig = inspect.signature(func)

    def arguments(args: Any, kwargs: Any) -> Dict[str, Any]:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def refused(args: Any, kwargs: Any) -> Optional[str]:
        d = _gate(session, tool_name, arguments(args, kwargs))
        if d.action >= refuse_at:
            return f"refused by the monitor: {d.reason}"
        return None

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def gated(*args: Any, **kwargs: Any) -> Any:
            no = refused(args, kwargs)
            if no is not None:
                return no
            result = await func(*args, **kwargs)
            _observe(session, tool_name, result, arguments(args, kwargs))
            return result

    else:

        @functools.wraps(func)
        def gated(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            no = refused(args, kwargs)
            if no is not None:
                return no
            result = func(*args, **kwargs)
            _observe(session, tool_name, result, arguments(args, kwargs))
            return result

    tool = function_tool(gated, name_override=tool_name)
    try:
        tool.__wrapped_gated__ = gated  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return tool
