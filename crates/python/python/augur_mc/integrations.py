"""Gating agent tools with a monitor session, for LangChain and the OpenAI Agents SDK.

Each wrapper gates the call with the tool's name and arguments before running it: ALLOW and
WARN run the tool, PAUSE and BLOCK refuse it with the decision's reason (LangChain:
``ToolException``, which LangChain hands back to the model when the tool has
``handle_tool_error``; the Agents SDK: the refusal is the tool's output). Neither framework is
a dependency of this package: each is imported when its wrapper is used.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional

from . import Action, Decision, Session


class Refused(Exception):
    """An action the monitor paused or blocked."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


def _gate(session: Session, name: str, args: Any) -> Decision:
    return session.gate(name, args)


def guard_langchain_tool(tool: Any, session: Session, refuse_at: Action = Action.PAUSE) -> Any:
    """A LangChain ``BaseTool`` that gates every call of ``tool`` through ``session``; a
    decision at or above ``refuse_at`` raises ``ToolException(reason)``.

    >>> guarded = guard_langchain_tool(send_email_tool, monitor.session())  # doctest: +SKIP
    """
    from langchain_core.tools import BaseTool, ToolException

    inner = tool

    class Guarded(BaseTool):  # type: ignore[misc, valid-type]
        name: str = inner.name
        description: str = inner.description
        args_schema: Any = inner.args_schema
        handle_tool_error: Any = True

        def _run(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.pop("run_manager", None)
            call = dict(kwargs)
            if args:
                call.update({f"arg{i}": a for i, a in enumerate(args)})
            d = _gate(session, inner.name, call)
            if d.action >= refuse_at:
                raise ToolException(d.reason)
            return inner.invoke(call if not args else args[0])

    return Guarded()


def guarded_function_tool(
    func: Callable[..., Any],
    session: Session,
    name: Optional[str] = None,
    refuse_at: Action = Action.PAUSE,
) -> Any:
    """An OpenAI Agents SDK ``FunctionTool`` for ``func`` that gates each call through
    ``session``; a refused call returns ``"refused by the monitor: <reason>"`` to the model
    instead of running. The gated plain function is ``guarded.__wrapped_gated__``."""
    from agents import function_tool

    tool_name = name or func.__name__
    sig = inspect.signature(func)

    @functools.wraps(func)
    def gated(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        d = _gate(session, tool_name, dict(bound.arguments))
        if d.action >= refuse_at:
            return f"refused by the monitor: {d.reason}"
        return func(*args, **kwargs)

    tool = function_tool(gated, name_override=tool_name)
    try:
        tool.__wrapped_gated__ = gated  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return tool
