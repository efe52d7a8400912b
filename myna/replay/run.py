"""Running an episode: one attempt in a fresh world, call by call, then a verified submit.

`EpisodeRunner` prepares what every attempt of one episode shares (the indexed initial world, the
policy, the route table); `Attempt` is one agent's try. This is the step function the Gymnasium
`Env`, the HTTP server, the auditor and the benchmark all drive, and it is the declared exception
boundary: a forbidden call or a crashing world ends the attempt with a `Repercussion` instead of
raising into the trainer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from myna.errors import MynaError, ReplayError
from myna.replay.episode import AnswerStep, Episode, HttpStep, Policy, Step, ToolStep
from myna.replay.rubric import Grader, grade_all
from myna.replay.verify import (
    CallRecord,
    Outcome,
    VerifierResult,
    base_of,
    forbidden_reason,
    make_outcome,
    verify,
)
from myna.replay.world import HttpRequest, Response, ToolTranslator, World, WorldFactory
from myna.schemas.model import Operation, ServiceModel

DEFAULT_ADMIN_PREFIXES: tuple[str, ...] = ("/_myna",)
MAX_NESTING = 4
"""How deep requests may nest inside requests (a batch in a batch) before the policy refuses the
call as a whole, since nothing under that depth is looked at."""

_PARAM = re.compile(r"\{[^/{}]+\}")

Unpack = Callable[[HttpRequest], list[HttpRequest]]
"""The requests one request carries inside it (a batch's), as the service would serve them."""


def _as_sent(path: str) -> str:
    return path


def _template_regex(path: str) -> re.Pattern[str]:
    parts = _PARAM.split(path)
    return re.compile("^" + "([^/]+)".join(re.escape(part) for part in parts) + "/?$")


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    params: tuple[str, ...]
    operation: Operation


@dataclass(frozen=True, slots=True)
class Routes:
    """Which calls are documented operations of the model, and which hit the admin API.

    `canonical` maps a path the service also accepts onto the one its model documents (ServiceNow's
    `/api/now/v2/table/...`), and `unpack` lists the requests a call carries inside it (a batch's),
    so a policy judges what each call does, however it was wrapped.
    """

    routes: tuple[Route, ...]
    admin_prefixes: tuple[str, ...] = DEFAULT_ADMIN_PREFIXES
    canonical: Callable[[str], str] = _as_sent
    unpack: Unpack | None = None

    @classmethod
    def from_model(
        cls,
        model: ServiceModel,
        admin_prefixes: Iterable[str] = DEFAULT_ADMIN_PREFIXES,
        *,
        canonical: Callable[[str], str] = _as_sent,
        unpack: Unpack | None = None,
    ) -> Routes:
        routes = [
            Route(
                operation.method.upper(),
                _template_regex(operation.path),
                tuple(name.strip("{}") for name in _PARAM.findall(operation.path)),
                operation,
            )
            for operation in model.operations
        ]
        # Literal segments beat parameters: /table/incident/count before /table/incident/{id}.
        routes.sort(key=lambda route: len(route.params))
        return cls(tuple(routes), tuple(admin_prefixes), canonical, unpack)

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The documented operation a call reaches, with its path parameters."""
        bare = urlsplit(path).path or "/"
        wanted = method.upper()
        for route in self.routes:
            if route.method != wanted:
                continue
            found = route.pattern.match(bare)
            if found:
                return route.operation, dict(zip(route.params, found.groups(), strict=True))
        return None

    def classify(self, method: str, path: str) -> CallRecord:
        bare = urlsplit(path).path or "/"
        admin = any(bare.startswith(prefix) for prefix in self.admin_prefixes)
        bare = self.canonical(bare)
        documented = self.match(method, bare) is not None
        return CallRecord(method.upper(), bare, 0, documented=documented, admin=admin)

    def expand(
        self, method: str, path: str, params: Mapping[str, str] | None = None, body: Any = None
    ) -> list[CallRecord]:
        """The call, then every request nested in it (depth first), each as a `CallRecord` the
        policy can judge; nested ones are marked `nested`."""
        return self._expand(HttpRequest(method, path, dict(params or {}), body), 0)

    def _expand(self, request: HttpRequest, depth: int) -> list[CallRecord]:
        shape = self.classify(request.method, request.path)
        record = CallRecord(
            shape.method,
            shape.path,
            0,
            request.params,
            request.body,
            shape.documented,
            shape.admin,
            nested=depth > 0,
        )
        inner = self.unpack(request) if self.unpack is not None else []
        if inner and depth >= MAX_NESTING:
            # Requests nobody looked at are refused as a whole rather than trusted.
            hidden = f"{record.path} (requests nested {MAX_NESTING + 1} deep)"
            return [record, CallRecord(record.method, hidden, 0, documented=False, nested=True)]
        return [record, *(found for call in inner for found in self._expand(call, depth + 1))]


RepercussionKind = Literal["forbidden_call", "crash", "step_limit"]


@dataclass(frozen=True, slots=True)
class Repercussion:
    kind: RepercussionKind
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Reply:
    """What the agent sees after a call: the status and body, or why it was not sent."""

    status: int
    body: Any = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"status": self.status, "body": self.body}
        if self.error is not None:
            shown["error"] = self.error
        return shown


@dataclass(frozen=True, slots=True)
class Result:
    """The end of an attempt: the reward and why."""

    reward: float
    passed: bool
    verification: VerifierResult
    repercussion: Repercussion | None = None

    def as_dict(self) -> dict[str, Any]:
        shown = self.verification.as_dict()
        shown["reward"], shown["passed"] = self.reward, self.passed
        shown["repercussion"] = None if self.repercussion is None else self.repercussion.as_dict()
        return shown


class EpisodeRunner:
    """What all attempts of one episode share; `start()` opens a fresh world for one attempt.

    `grader`, when given, grades the episode's rubric checks at each submit (reported apart)."""

    def __init__(
        self,
        episode: Episode,
        factory: WorldFactory,
        routes: Routes,
        translate: ToolTranslator | None = None,
        tool_definitions: Sequence[Mapping[str, Any]] = (),
        grader: Grader | None = None,
    ) -> None:
        self.episode = episode
        self.factory = factory
        self.routes = routes
        self.translate = translate
        self.tool_definitions = list(tool_definitions)
        self.grader = grader
        environment = episode.environment
        self.base = base_of(environment)
        self.policies = [c for c in episode.verifier.checks if isinstance(c, Policy)]
        self._baseline: frozenset[str] | None = None

    def start(self) -> Attempt:
        return Attempt(self, self.factory.open(self.episode.environment))

    def outcome(self, world: World, calls: Iterable[CallRecord], answer: str | None) -> Outcome:
        return make_outcome(
            self.episode.environment, world.changes(), calls, answer, base=self.base
        )

    @property
    def baseline(self) -> frozenset[str]:
        """The checks a do-nothing attempt passes: they hold already, so they are guards."""
        if self._baseline is None:
            untouched = make_outcome(self.episode.environment, base=self.base)
            result = verify(self.episode.verifier, untouched)
            self._baseline = frozenset(c.name for c in result.checks if c.passed)
        return self._baseline

    def verify(self, outcome: Outcome) -> VerifierResult:
        result = verify(self.episode.verifier, outcome, self.baseline)
        if self.grader is None:
            return result
        graded = grade_all(
            self.episode.verifier, outcome, self.episode.problem.instruction, self.grader
        )
        return replace(result, graded=graded)


@dataclass(slots=True)
class Attempt:
    """One try at an episode. Calls go to its own world; `submit` closes it and scores it."""

    runner: EpisodeRunner
    world: World
    calls: list[CallRecord] = field(default_factory=list)
    repercussion: Repercussion | None = None
    result: Result | None = None

    @property
    def done(self) -> bool:
        return self.result is not None or self.repercussion is not None

    def call(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> Reply:
        if self.result is not None:
            raise ReplayError("the attempt was submitted; start a new one to try again")
        if self.repercussion is not None:
            # Agents driven by `solve` learn of the end only through their replies.
            return Reply(409, error=f"the attempt has ended: {self.repercussion.detail}")
        records = self.runner.routes.expand(method, path, params, body)
        for policy in self.runner.policies:
            for record in records:
                reason = forbidden_reason(policy, record)
                if reason is not None:
                    # Never sent: a forbidden action, even one wrapped in a batch, must not
                    # reach the world.
                    self.calls += records
                    self.repercussion = Repercussion("forbidden_call", reason)
                    return Reply(403, error=reason)
        try:
            sent = self.world.client.request(method, path, json=body, params=params)
            response = Reply(sent.status, _payload(sent))
        # The step function is the declared boundary: a world that crashes ends the attempt
        # with a repercussion rather than taking the trainer down.
        except Exception as crash:
            self.calls += records
            self.repercussion = Repercussion("crash", f"{type(crash).__name__}: {crash}")
            return Reply(500, error=self.repercussion.detail)
        self.calls += [replace(records[0], status=response.status), *records[1:]]
        return response

    def tool(self, name: str, arguments: Mapping[str, Any]) -> Reply:
        offered = self.runner.episode.environment.tools
        if self.runner.translate is None or (offered and name not in offered):
            return Reply(400, error=f"no tool named {name!r}; offered: {', '.join(offered)}")
        try:
            request: HttpRequest = self.runner.translate(name, arguments)
        except MynaError as bad_arguments:
            return Reply(400, error=str(bad_arguments))
        return self.call(request.method, request.path, request.params, request.body)

    def step(self, step: Step) -> Reply | Result:
        """Run one reference-solution step."""
        if isinstance(step, HttpStep):
            return self.call(step.method, step.path, step.params, step.body)
        if isinstance(step, ToolStep):
            return self.tool(step.tool, step.arguments)
        return self.submit(step.text)

    def end(self, repercussion: Repercussion) -> Result:
        """End the attempt early (a step limit); it scores as failed."""
        self.repercussion = self.repercussion or repercussion
        return self.submit(None)

    def submit(self, answer: str | None) -> Result:
        if self.result is not None:
            return self.result
        try:
            outcome = self.runner.outcome(self.world, self.calls, answer)
            verification = self.runner.verify(outcome)
            self.world.close()
        # Still the step function's boundary: a world that cannot report its changes fails the
        # attempt rather than the trainer.
        except Exception as crash:
            verification = VerifierResult(0.0, False, ())
            self.repercussion = Repercussion("crash", f"{type(crash).__name__}: {crash}")
        if self.repercussion is not None:
            self.result = Result(0.0, False, verification, self.repercussion)
        else:
            self.result = Result(verification.reward, verification.passed, verification)
        return self.result


def _payload(response: Response) -> Any:
    """The JSON body, or None for an empty one (a 204 after a delete)."""
    try:
        return response.json()
    except ValueError:
        return None


def run_steps(runner: EpisodeRunner, steps: Iterable[Step]) -> Result:
    """Play a scripted list of steps in a fresh world; submit with the last answer, if any."""
    attempt = runner.start()
    answer: str | None = None
    for step in steps:
        if isinstance(step, AnswerStep):
            answer = step.text
            continue
        attempt.step(step)
        if attempt.done:
            break
    return attempt.submit(answer)
