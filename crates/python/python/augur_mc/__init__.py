"""Augur in Python: the probabilistic model checker and the runtime monitor, in-process.

>>> import augur_mc as augur
>>> r = augur.check("models/die.json", 'P=? [ F "six" ]')[0]
>>> round(r.value, 6)
0.166667

Checks run in Rust with the GIL released; Ctrl-C (KeyboardInterrupt) stops a long check.
Errors are exceptions carrying the located message: ``ParseError`` (``file``, ``line``,
``column``), ``ModelError``, ``LimitError``, ``ParameterError`` -- all ``AugurError``.
"""

from __future__ import annotations

import enum
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import (
    AugurError,
    InternalError,
    LimitError,
    ModelError,
    ParameterError,
    ParseError,
)
from .counts import counts_from_rows

__version__ = _native.__version__

__all__ = [
    "Action",
    "AugurError",
    "Decision",
    "InternalError",
    "LearnedModel",
    "LimitError",
    "Model",
    "ModelError",
    "Monitor",
    "ParameterError",
    "ParseError",
    "Result",
    "Session",
    "check",
    "check_json",
    "counts_from_rows",
    "explain",
    "format_number",
    "horizon",
    "learn",
    "load_model",
    "pac",
    "pac_required",
    "parse_model",
    "parse_prism",
]

PathLike = Union[str, "os.PathLike[str]"]


def _consts(const: Union[None, str, Mapping[str, Any]]) -> Optional[str]:
    """Constants as ``"N=3,p=0.5"`` (a dict is written that way)."""
    if const is None:
        return None
    if isinstance(const, str):
        return const
    parts = []
    for k, v in const.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        parts.append(f"{k}={v}")
    return ",".join(parts)


class Model:
    """A DTMC loaded in memory (from a file or from text), with its labels and rewards."""

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def states(self) -> int:
        """The number of reachable states."""
        return self._native.states

    @property
    def transitions(self) -> int:
        """The number of transitions."""
        return self._native.transitions

    @property
    def initial(self) -> List[int]:
        """The initial states."""
        return list(self._native.initial)

    @property
    def labels(self) -> List[str]:
        """The label names."""
        return list(self._native.labels)

    @property
    def name(self) -> str:
        """The file name (or ``model_text``)."""
        return self._native.name

    def __repr__(self) -> str:
        return f"Model({self.name!r}, states={self.states}, transitions={self.transitions})"


class LearnedModel(Model):
    """A model learned from traces by :func:`learn`: a :class:`Model` (check it, compile a
    monitor from it) that also keeps its transition counts (for :func:`pac`), its state
    names and the learner's summary; :meth:`save` writes the file ``augur learn`` writes."""

    __slots__ = ()

    @property
    def category(self) -> Optional[str]:
        """The traces' category (with ``by_category=True``), else None."""
        return self._native.category

    @property
    def state_names(self) -> List[str]:
        """The name of every state: ``{a,b}`` (its true predicates) with an abstraction spec,
        the name in the traces without one, then the end state's name with ``end_state``."""
        return list(self._native.state_names)

    @property
    def summary(self) -> Dict[str, Any]:
        """What the learner read and did: ``traces``, ``steps``, ``states``,
        ``states_seen``, ``transitions``, ``invalid_transitions_dropped``, ``absorbing``,
        ``unobserved_uniform``, ``unobserved_absorbing``, ``initial``, ``skipped``."""
        return json.loads(self._native.learn_summary)

    @property
    def confidence(self) -> Optional[float]:
        """With ``intervals=True``: the confidence the learned intervals hold with,
        simultaneously (``[Pmin, Pmax]`` holds the true value with that probability); else
        None."""
        iv = self.summary.get("intervals")
        return None if iv is None else iv["confidence"]

    def to_dict(self) -> Dict[str, Any]:
        """The model file as ``augur learn`` writes it (Augur JSON with ``counts`` and
        ``metadata``)."""
        return json.loads(self._native.learned_json)

    def save(self, path: PathLike) -> None:
        """Write the model file (readable by ``augur check``, ``augur pac``, :func:`load_model`)."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self._native.learned_json)

    def __repr__(self) -> str:
        cat = "" if self.category is None else f", category={self.category!r}"
        return f"LearnedModel(states={self.states}, transitions={self.transitions}{cat})"


def learn(
    traces: Union[PathLike, Sequence[Mapping[str, Any]]],
    abstraction: Union[None, PathLike, str] = None,
    alpha: float = 0.0,
    by_category: bool = False,
    *,
    skip_invalid: bool = False,
    final_absorbing: bool = False,
    order: int = 1,
    end_state: Optional[str] = None,
    intervals: bool = False,
    confidence: float = 0.95,
) -> Union[LearnedModel, Dict[str, LearnedModel]]:
    """Learn a DTMC from traces, as ``augur learn`` does (same options, same model).

    ``traces``: a trace file (JSON Lines, or CSV long form for ``.csv``), or a list of traces
    as dicts (``{"steps": [{"state": "a"}, ...], "category": ...}``). ``abstraction``: an
    abstraction spec file (``.toml``) or its TOML text, mapping concrete steps to abstract
    states. ``alpha``: Laplace smoothing. ``by_category``: one model per category (a dict
    category -> model). ``skip_invalid``: skip bad lines and traces. ``final_absorbing``:
    never-left states become absorbing (α = 0). ``order``: a k-th order chain.
    ``end_state``: trace ends move to an extra absorbing state of that name (labelled with
    it), so that ``P=? [ F "unsafe" ]`` is the probability of reaching ``unsafe`` before the
    run ends (models/learning.md). ``intervals``: learn an interval DTMC whose intervals hold
    simultaneously with probability ``confidence`` (``augur learn --intervals``,
    docs/robust.md); check it with ``Pmax=?``/``Pmin=?``, and :attr:`LearnedModel.confidence`
    says the level."""
    if isinstance(traces, (str, os.PathLike)):
        tpath: Optional[str] = os.fspath(traces)
        ttext: Optional[str] = None
    else:
        tpath = None
        ttext = "".join(json.dumps(t) + "\n" for t in traces)
    apath: Optional[str] = None
    atext: Optional[str] = None
    # A string with a line break is the spec's TOML text; without one, a file name.
    if isinstance(abstraction, os.PathLike) or (
        isinstance(abstraction, str) and "\n" not in abstraction
    ):
        apath = os.fspath(abstraction)
    elif abstraction is not None:
        atext = abstraction
    natives = _native.learn(
        tpath, ttext, "jsonl", apath, atext, alpha, by_category, skip_invalid,
        final_absorbing, order, end_state, confidence if intervals else None,
    )
    models = [LearnedModel(n) for n in natives]
    if by_category:
        return {m.category: m for m in models}
    return models[0]


def load_model(
    path: PathLike,
    const: Union[None, str, Mapping[str, Any]] = None,
    *,
    exact: bool = False,
    max_states: Optional[int] = None,
    timeout: Optional[float] = None,
    max_smoothed_transitions: Optional[int] = None,
) -> Model:
    """Load a model file: ``.pm``/``.prism``, ``.tra`` (with ``.lab``, ``.srew``, ...),
    ``.drn``, ``.json``. ``const`` gives undefined constants (``"N=3"`` or ``{"N": 3}``).
    ``max_smoothed_transitions`` bounds the transitions a learned model's implicit
    (smoothed) rows may expand to (default 2^24, as ``--max-smoothed-transitions``)."""
    return Model(
        _native.load_model(
            os.fspath(path),
            _consts(const),
            exact,
            max_states,
            timeout,
            max_smoothed_transitions,
        )
    )


def parse_model(
    text: str,
    format: str = "prism",
    const: Union[None, str, Mapping[str, Any]] = None,
    *,
    exact: bool = False,
    max_states: Optional[int] = None,
    timeout: Optional[float] = None,
    max_smoothed_transitions: Optional[int] = None,
) -> Model:
    """Read a model from text in ``format`` (``prism``, ``drn``, ``json``, ``tra``);
    located errors name the text ``model_text``. ``max_smoothed_transitions`` as for
    :func:`load_model`."""
    return Model(
        _native.parse_model(
            text,
            format,
            _consts(const),
            exact,
            max_states,
            timeout,
            max_smoothed_transitions,
        )
    )


def parse_prism(
    text: str,
    const: Union[None, str, Mapping[str, Any]] = None,
    **kwargs: Any,
) -> Model:
    """Read a model written in the PRISM language."""
    return parse_model(text, "prism", const, **kwargs)


class Result:
    """The result of one property: ``value`` (a float, a bool, ``inf``, or None),
    ``bounds`` (sound ``(lo, hi)`` or None), ``method``, ``seconds``, and with
    ``all_states=True`` the value of every state in ``states``."""

    __slots__ = ("name", "property", "value", "bounds", "method", "seconds", "states", "notes", "_raw")

    def __init__(self, raw: Dict[str, Any], warnings: Sequence[str] = ()) -> None:
        self._raw = raw
        self.name: Optional[str] = raw.get("name")
        self.property: str = raw["property"]
        self.value: Union[float, bool, None] = _scalar(raw.get("value"))
        b = raw.get("bounds")
        self.bounds: Optional[Tuple[float, float]] = (
            None if b is None else (_scalar(b[0]), _scalar(b[1]))
        )
        self.method: Optional[str] = raw.get("method")
        self.seconds: float = raw.get("seconds", 0.0)
        s = raw.get("states")
        self.states: Optional[List[Union[float, bool, None]]] = (
            None if s is None else [_scalar(x) for x in s]
        )
        # The property's own remarks, then the model's and the properties' warnings (what
        # the CLI prints as `warning: ...`).
        self.notes: List[str] = list(raw.get("notes", [])) + list(warnings)

    def to_dict(self) -> Dict[str, Any]:
        """The result as ``augur check --json`` gives it."""
        return dict(self._raw)

    def to_numpy(self) -> Any:
        """The per-state values as a NumPy array (needs ``numpy`` and ``all_states=True``)."""
        import numpy  # noqa: PLC0415 (optional dependency)

        if self.states is None:
            raise ParameterError("no per-state values: check with all_states=True")
        return numpy.asarray(self.states, dtype=float)

    def __repr__(self) -> str:
        bounds = None if self.bounds is None else f"({_shown(self.bounds[0])}, {_shown(self.bounds[1])})"
        return (
            f"Result({self.property!r}, value={_shown(self.value)}, bounds={bounds}, "
            f"method={self.method!r})"
        )

    def __str__(self) -> str:
        """The property and its value as ``augur check`` begins its line: ``P=? [ F "goal" ] = 0.0625``."""
        name = "" if self.name is None else f'"{self.name}": '
        return f"{name}{self.property} = {_shown(self.value)}"


def format_number(x: float) -> str:
    """A number as ``augur check`` prints it: the shortest decimal within eight ulps
    (``0.0625``, not ``0.06249999999999999``), ``inf`` and ``-inf``."""
    return _native.format_number(float(x))


def _shown(v: Any) -> str:
    """A value as ``augur check`` prints it (numbers by the project's formatter)."""
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, float):
        return format_number(v)
    return repr(v)


def _scalar(v: Any) -> Any:
    if v == "inf":
        return float("inf")
    if v == "-inf":
        return float("-inf")
    return v


def _model(model: Union[Model, PathLike], const: Any) -> Model:
    if isinstance(model, Model):
        return model
    return load_model(model, const)


def check_json(
    model: Union[Model, PathLike],
    props: Union[str, Sequence[str]],
    const: Union[None, str, Mapping[str, Any]] = None,
    method: Optional[str] = None,
    all_states: bool = False,
    timeout: Optional[float] = None,
) -> Dict[str, Any]:
    """Check properties; the whole document of ``augur check --json`` (docs/json.md)."""
    if isinstance(props, str):
        props = [props]
    m = _model(model, const)
    text = _native.check(m._native, list(props), _consts(const), method, all_states, timeout)
    return json.loads(text)


def check(
    model: Union[Model, PathLike],
    props: Union[str, Sequence[str]],
    const: Union[None, str, Mapping[str, Any]] = None,
    method: Optional[str] = None,
    all_states: bool = False,
    timeout: Optional[float] = None,
) -> List[Result]:
    """Check PCTL properties on a model (a :class:`Model` or a file path); one
    :class:`Result` per property. A malformed property raises :class:`ParseError` with its
    location; a property that cannot be checked raises the error of the first one."""
    doc = check_json(model, props, const, method, all_states, timeout)
    warnings = list(doc.get("warnings", []))
    return [Result(r, warnings) for r in doc["results"]]


def horizon(
    model: Union[Model, PathLike],
    target: str,
    max_h: int,
    const: Union[None, str, Mapping[str, Any]] = None,
    all_states: bool = False,
    timeout: Optional[float] = None,
) -> Any:
    """The curve ``P(F<=h target)`` for ``h = 1..max_h`` from the initial state (a list), or
    with ``all_states=True`` every state's curve (a list of lists, one per state)."""
    m = _model(model, const)
    doc = json.loads(_native.horizon(m._native, target, max_h, _consts(const), all_states, timeout))
    return doc["table"] if all_states else doc["curve"]


def explain(
    model: Union[Model, PathLike],
    prop: str,
    paths: int = 10,
    const: Union[None, str, Mapping[str, Any]] = None,
    from_state: Union[None, int, str] = None,
    subsystem: Optional[str] = None,
    dot: bool = False,
    prism: bool = False,
    timeout: Optional[float] = None,
) -> Dict[str, Any]:
    """Why is the probability (or expected reward) of ``prop`` so large? The document of
    ``augur explain --json`` (docs/explain.md): for ``P<=θ [ φ U ψ ]`` the ``paths`` most
    probable paths (``states`` by name, ``probability``, ``cumulative``) and
    ``paths_to_exceed``, the number of them whose mass already exceeds θ; with
    ``subsystem="heuristic"`` or ``"minimal"`` a critical subsystem (``subsystem``, and with
    ``dot=True`` / ``prism=True`` its picture ``dot`` and PRISM model ``subsystem_model``);
    for ``R{"r"}<=r [ F ψ ]`` the paths and states (``rewards``) carrying most of it.
    ``from_state`` is a state index or a formula that holds in one state."""
    m = _model(model, const)
    start = None if from_state is None else str(from_state)
    text = _native.explain(m._native, prop, paths, _consts(const), start, subsystem, dot, prism, timeout)
    return json.loads(text)


def pac(
    model: Union[PathLike, Mapping[str, Any], "LearnedModel"],
    epsilon: float,
    delta: float,
    hoeffding: bool = False,
) -> Dict[str, Any]:
    """The PAC report of a learned model (a :class:`LearnedModel`, a file written by
    ``augur learn``, or its JSON as a dict): per state the observations, the required count
    and what is missing; ``holds``."""
    if isinstance(model, LearnedModel):
        return json.loads(_native.pac_learned(model.name, model._native.learned_json, epsilon, delta, hoeffding))
    if isinstance(model, Mapping):
        return json.loads(_native.pac_learned("model", json.dumps(model), epsilon, delta, hoeffding))
    path = os.fspath(model)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ModelError(f"{path}: {e.strerror}") from None
    return json.loads(_native.pac_learned(path, text, epsilon, delta, hoeffding))


def pac_required(
    states: int,
    epsilon: float,
    delta: float,
    p_hat: Optional[float] = None,
    observations: Optional[int] = None,
    hoeffding: bool = False,
) -> Dict[str, Any]:
    """The calculator form: the observations needed out of one state of a ``states``-state
    model (``required``), and with ``observations`` whether they suffice (``holds``)."""
    return json.loads(_native.pac_calculator(states, epsilon, delta, p_hat, observations, hoeffding))


class Action(enum.Enum):
    """A monitor verdict, ordered ALLOW < WARN < PAUSE < BLOCK."""

    ALLOW = "allow"
    WARN = "warn"
    PAUSE = "pause"
    BLOCK = "block"

    @property
    def severity(self) -> int:
        return ["allow", "warn", "pause", "block"].index(self.value)

    def __lt__(self, other: "Action") -> bool:
        return self.severity < other.severity

    def __le__(self, other: "Action") -> bool:
        return self.severity <= other.severity

    def __gt__(self, other: "Action") -> bool:
        return self.severity > other.severity

    def __ge__(self, other: "Action") -> bool:
        return self.severity >= other.severity


class Decision:
    """The monitor's decision on one action: ``action`` (:class:`Action`), ``probability``,
    ``bounds``, ``reason``, ``state`` (the state the action leads to), ``horizon``, ``step``;
    ``pause_id`` on a PAUSE (answer it with :meth:`Session.approve` / :meth:`Session.deny`);
    ``to_dict()`` gives every field of ``augur monitor gate``'s JSON line."""

    __slots__ = ("action", "probability", "bounds", "reason", "state", "horizon", "step", "tool", "pause_id", "_raw")

    def __init__(self, raw: Dict[str, Any], warnings: Sequence[str] = ()) -> None:
        self._raw = raw
        self.action = Action(raw["verdict"])
        self.probability: float = raw["probability"]
        self.bounds: Tuple[float, float] = tuple(raw["bounds"])  # type: ignore[assignment]
        self.reason: str = raw["reason"]
        self.state: str = raw["state"]
        self.horizon: Optional[int] = raw.get("horizon")
        self.step: int = raw["step"]
        self.tool: str = raw["tool"]
        self.pause_id: Optional[str] = raw.get("pause_id")

    @property
    def allowed(self) -> bool:
        """Whether the action may go ahead (ALLOW or WARN)."""
        return self.action <= Action.WARN

    def to_dict(self) -> Dict[str, Any]:
        return dict(self._raw)

    def __repr__(self) -> str:
        return f"Decision({self.action.name}, p={self.probability:.4g}, state={self.state!r})"


def _args_json(args: Union[None, str, Mapping[str, Any]]) -> Optional[str]:
    if args is None:
        return None
    if isinstance(args, str):
        # OpenAI-style arguments: a JSON string holding the object.
        return json.dumps(args)
    return json.dumps(args)


class Session:
    """One agent run being gated: call :meth:`gate` before every tool call."""

    __slots__ = ("_native", "id")

    def __init__(self, native: Any, id: str) -> None:
        self._native = native
        self.id = id

    def gate(
        self,
        tool: Optional[str] = None,
        args: Union[None, str, Mapping[str, Any]] = None,
        *,
        state: Optional[Mapping[str, Any]] = None,
    ) -> Decision:
        """The decision on calling ``tool`` with ``args`` (a dict, or a JSON string), or for an
        abstraction monitor on reaching the concrete ``state``. ALLOW and WARN advance the
        session; PAUSE and BLOCK do not (until :meth:`record` says it ran anyway)."""
        s = None if state is None else json.dumps(state)
        return Decision(json.loads(self._native.gate(self.id, tool, _args_json(args), s)))

    def record(
        self,
        tool: str,
        args: Union[None, str, Mapping[str, Any]] = None,
        executed: bool = True,
        *,
        state: Optional[Mapping[str, Any]] = None,
    ) -> bool:
        """Say what happened to the last gated action (``executed=False``: it did not run, the
        session moves back); returns whether the state changed."""
        s = None if state is None else json.dumps(state)
        return self._native.record(tool, _args_json(args), s, executed)

    def observe(
        self,
        source: str,
        text: str,
        tool: Optional[str] = None,
        args: Union[None, str, Mapping[str, Any]] = None,
    ) -> Dict[str, int]:
        """Observe text the agent saw: ``source`` is ``"user"`` (the user's request),
        ``"system"`` (the system prompt) or ``"tool"`` (a tool's result; ``tool`` names the tool).
        The user's request and system prompt are trusted; a tool's result is untrusted unless
        the policy's ``trusted_tools`` names the tool. With a monitor that tracks provenance (a
        version-2 monitor with the ``provenance`` section, 180 states), a later call whose
        destination or payload holds a value seen only in untrusted text is VIOLATED (risk
        rule 14) and the decision's ``reason`` says which argument, which value and where it was
        first seen. Returns ``{"values", "new", "skipped"}``: values found, values stored for
        the first time, bytes beyond the scan limit not read. ``args``, for a tool's result:
        the arguments of the call whose result it is (a dict, or a JSON string holding one, as
        for :meth:`gate`); with them a call on a source the user's request named makes its
        result *delegated* (a later call that uses its values pauses instead of blocking), and
        a trusted tool vouches for none of its own arguments' values. A bad ``source`` (or a
        tool result without ``tool``, or ``args`` with another source) raises
        :class:`ParameterError`."""
        return json.loads(self._native.observe(source, text, tool, _args_json(args)))

    def approve(self, pause_id: str) -> bool:
        """A person approved the paused action ``pause_id`` (the ``pause_id`` of the PAUSE
        decision): it is executed, and the session moves to the state it leads to. Returns
        whether the state changed. An id that is not the pending pause (a later ``gate`` or
        ``record`` superseded it, or it was answered) raises :class:`ParameterError`. As the
        MCP server's harness-only ``approve``: call it from the harness, never from the agent."""
        return self._native.answer_pause(pause_id, True)

    def deny(self, pause_id: str) -> bool:
        """A person denied the paused action ``pause_id``: it does not run and the session
        stays where it is (returns False). Other ids raise :class:`ParameterError`."""
        return self._native.answer_pause(pause_id, False)

    @property
    def pending_pause(self) -> Optional[Tuple[str, str]]:
        """The pause waiting for an answer, as ``(pause_id, tool)``, or None."""
        return self._native.pending_pause()

    def summary(self) -> Dict[str, Any]:
        """Actions gated, decisions per verdict, peak probability and risk, overrides."""
        raw = json.loads(self._native.summary())
        d = raw.pop("decisions")
        raw.update(dict(zip(["allow", "warn", "pause", "block"], d)))
        return raw

    def reset(self) -> None:
        """Back to the start state with fresh counts."""
        self._native.reset()

    @property
    def state(self) -> str:
        """The current model state's name."""
        return self._native.state()


class Monitor:
    """A compiled runtime monitor (``monitor.json``)."""

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    @classmethod
    def compile(
        cls,
        model: Union[Model, PathLike, Sequence[Union[Model, PathLike, Tuple[str, Model]]]],
        prop: str,
        horizon: Optional[int] = None,
        *,
        const: Union[None, str, Mapping[str, Any]] = None,
        max_states: Optional[int] = None,
        timeout: Optional[float] = None,
        states: Optional[str] = None,
        classifier: Optional[PathLike] = None,
        abstraction: Optional[PathLike] = None,
        robust: bool = False,
        confidence: Optional[float] = None,
        explain: bool = False,
    ) -> "Monitor":
        """Compile a monitor for ``prop`` (e.g. ``'P=? [ F<=5 "violated" ]'``) from a model, a
        model file, or a list of them (``(category, Model)`` pairs for per-category tables;
        a file ``CATEGORY=PATH``), as ``augur monitor compile`` does.

        ``horizon`` is the length of the P(F<=h) curve (default: the property's step bound,
        else 10). ``const`` gives constants (``"p=0.2"`` or ``{"p": 0.2}``): a model file's
        undefined ones and names used in ``prop``. Model files are loaded with at most
        ``max_states`` states; ``timeout`` (seconds) bounds loading and checking together, and
        Ctrl-C (KeyboardInterrupt) stops the compilation. ``states`` is how actions map to
        states: ``"dtr"``, ``"risk-level"`` or ``"abstraction"`` (default: from the model);
        ``classifier`` a classifier rules file (TOML) for ``dtr``/``risk-level``;
        ``abstraction`` the abstraction spec (TOML) a learned model was learned with, for
        ``abstraction`` (e.g. ``models/microwave/spec.toml``). Errors are exceptions with
        locations (:class:`ParseError` for the property, located at ``--prop``); a limit hit
        is a :class:`LimitError`.

        ``robust=True`` also compiles robust upper bounds (``--robust``: Pmax over intervals
        learned from a learned model's counts at ``confidence``, default 0.95, or over an
        interval model's own intervals); sessions then decide on the bound, and decisions
        carry ``bound`` and ``confidence``. ``explain=True`` (``--explain``) compiles the most
        probable continuation of every state: decisions at warn and above carry
        ``continuation`` (the kind of action and its share of the risk)."""
        items = list(model) if isinstance(model, (list, tuple)) and not _is_pair(model) else [model]
        c = _consts(const)
        opt = lambda p: None if p is None else os.fspath(p)  # noqa: E731
        extra = (
            c,
            max_states,
            timeout,
            states,
            opt(classifier),
            opt(abstraction),
            robust,
            confidence,
            explain,
        )
        if all(isinstance(m, (str, os.PathLike)) for m in items):
            return cls(
                _native.NativeMonitor.compile([], [os.fspath(m) for m in items], prop, horizon, *extra)
            )
        natives = []
        for m in items:
            cat, mm = m if _is_pair(m) else (None, m)  # type: ignore[misc]
            if isinstance(mm, (str, os.PathLike)):
                mm = load_model(mm, const, max_states=max_states, timeout=timeout)
            natives.append((_model(mm, None)._native, cat))
        return cls(_native.NativeMonitor.compile(natives, None, prop, horizon, *extra))

    @classmethod
    def load(cls, path: PathLike) -> "Monitor":
        """Load a monitor file written by ``augur monitor compile`` or :meth:`save`."""
        return cls(_native.NativeMonitor.load(os.fspath(path)))

    @classmethod
    def default(cls) -> "Monitor":
        """SafetyDrift's 5-state risk-level chain with ``P=? [ F<=5 "violated" ]``."""
        return cls(_native.NativeMonitor.default())

    @classmethod
    def gateway(cls) -> "Monitor":
        """The built-in gateway monitor, ``augur monitor gate``'s and ``augur mcp
        --upstream``'s default: the risk-level chain with provenance (observe what the agent
        saw, with :meth:`Session.observe`), the user's intent and its verdict tiers."""
        return cls(_native.NativeMonitor.gateway())

    def save(self, path: PathLike) -> None:
        self._native.save(os.fspath(path))

    @property
    def property(self) -> str:
        return self._native.property

    def session(
        self,
        policy: Union[None, PathLike] = None,
        category: Optional[str] = None,
        *,
        policy_text: Optional[str] = None,
        id: str = "session",
    ) -> Session:
        """A new session at the start state; ``policy`` is a TOML file (default: block at
        P >= 0.9, pause at 0.6, warn at 0.3), ``category`` selects the table and overrides."""
        p = None if policy is None else os.fspath(policy)
        return Session(self._native.session(p, policy_text, category), id)


def _is_pair(x: Any) -> bool:
    return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], Model)
