"""Locust users that behave like editors, over HTTP and gRPC, and users asking for rewrites.

    python -m locust -f bench/served/locustfile.py --headless -H http://127.0.0.1:8000 -u 50 -r 10 -t 2m \\
        [--arm accelerated] [--cache-bust] [--think-time 1.0] [--csv bench/results/run --html ...]
    # add bench/served/shapes.py (-f bench/served/locustfile.py,bench/served/shapes.py) for the step load

- ``EditorUser`` (weight 6): ``POST /v1/correct`` with the paragraph a ``bench.served.editor.Editor``
  is typing (learner text: FCE dev and JFLEG dev), a think time between sends drawn from an
  exponential distribution of mean ``--think-time`` seconds, a stable ``client.user_id`` (so an
  experiment's sticky assignment holds) and, per user, code-point or UTF-16 offsets.
- ``GrpcEditorUser`` (weight 3): the same over gRPC ``Corrector/Correct``, a custom client firing
  Locust's request events (request type ``grpc``).
- ``GenerateUser`` (weight 1): ``POST /v1/generate``, beam search, two rewrites of one sentence.

Modes: ``--arm NAME`` forces an arm (``options.backend``, gRPC ``options.backend``); without it the
server decides (its experiment's assignment: A/B; without one, its default backend). Requests are
named by the arm the response says served them (``correct accelerated``, ``Correct autoregressive``
over gRPC; ``correct (no arm)`` when refused), so Locust's stats, CSV and HTML report give
p50/p95/p99 per arm. Every answer is checked (``bench.served.answers``): edits that do not rebuild the
corrected text, a forced arm not honoured, or a sticky user moved to another arm count as failures.
Name user classes on the command line to run only some (``EditorUser`` alone for arm timings).

``--accept-rate accelerated=0.6,autoregressive=0.5``: editors also say what they did with each suggestion
(``POST /v1/feedback``, gRPC ``Corrector/Feedback``), accepting it with the probability of the arm that made
it, else dismissing it, once per edit id; the experiment's report then tests the acceptance rates
(``bench.served.acceptance`` runs it repeatedly: does it find a planted difference, and only that?).
"""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path
from urllib.parse import urlsplit

import grpc
import grpc.experimental.gevent as grpc_gevent
from locust import FastHttpUser, User, events, task
from locust.env import Environment

from bench.served.answers import WrongAnswerError, check_correction, check_rewrites
from bench.served.editor import Editor, accept_rates, learner_sentences
from service.api.grpc.proto import gecserve_pb2 as pb
from service.api.grpc.proto import gecserve_pb2_grpc as pb_grpc

grpc_gevent.init_gevent()  # gRPC's own threads would block Locust's gevent loop

DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "dev"
DEFAULT_CORPUS = f"{DEV / 'fce.dev.detok.src'},{DEV / 'jfleg.dev.src'}"
UNITS = ("codepoint", "utf16")
REFUSED = "(no arm)"
GENERATE_SEQUENCES = 2

corpus: list[str] = []
_numbers = itertools.count()


@events.init_command_line_parser.add_listener
def _options(parser) -> None:
    group = parser.add_argument_group("gecserve")
    group.add_argument("--arm", default="", help="force this arm (options.backend); empty: the server assigns")
    group.add_argument("--corpus", default=DEFAULT_CORPUS, help="comma-separated files of learner sentences")
    group.add_argument("--think-time", type=float, default=1.0, help="mean seconds between an editor's sends")
    group.add_argument("--max-sentences", type=int, default=6, help="longest paragraph, in sentences")
    group.add_argument("--revisions", type=int, default=2, help="most resends of a typed paragraph with a change")
    group.add_argument("--cache-bust", action="store_true", help="make every sentence of every send new")
    group.add_argument("--seed", type=int, default=0, help="seeds each simulated user's choices")
    group.add_argument("--grpc-target", default="", help="host:port of the gRPC API (default: --host's, 50051)")
    group.add_argument(
        "--accept-rate",
        default="",
        help="editors accept each suggestion with this probability per arm, else dismiss it, and say so "
        "(POST /v1/feedback), e.g. accelerated=0.6,autoregressive=0.5; empty: no feedback",
    )


@events.init.add_listener
def _load_corpus(environment: Environment, **_: object) -> None:
    if environment.parsed_options is not None:
        corpus[:] = learner_sentences(Path(p) for p in environment.parsed_options.corpus.split(","))


class Typing:
    """What every editor shares: its number and user id, its random source, its unit, its editor, and what it
    did with each suggestion (decided once per edit id)."""

    environment: Environment

    def start_typing(self) -> None:
        options = self.environment.parsed_options
        self.number = next(_numbers)
        self.user_id = f"editor-{self.number}"
        self.rng = random.Random(f"{options.seed}:{self.number}")
        self.unit = self.rng.choice(UNITS)
        self.forced = options.arm or None
        self.served_by: str | None = None
        self.editor = Editor(corpus, self.rng, options.max_sentences, options.revisions, options.cache_bust)
        self.accept_rates = accept_rates(options.accept_rate)
        self.decided: dict[str, str] = {}

    def react(self, arm: str, edit_ids: list[str]) -> dict[str, list[str]]:
        """The suggestions of an answer by ``arm`` not decided yet, by action: each accepted with the arm's
        probability, else dismissed (none when ``--accept-rate`` names no rate for the arm)."""
        rate = self.accept_rates.get(arm)
        actions: dict[str, list[str]] = {}
        for edit_id in edit_ids:
            if rate is None or edit_id in self.decided:
                continue
            action = "accepted" if self.rng.random() < rate else "dismissed"
            self.decided[edit_id] = action
            actions.setdefault(action, []).append(edit_id)
        return actions

    def think(self) -> float:
        return self.rng.expovariate(1 / self.environment.parsed_options.think_time)

    def check_arm(self, arm: str) -> None:
        """The arm is the forced one, or for a user the server assigns, the one it had before."""
        if self.forced is not None and arm != self.forced:
            raise WrongAnswerError(f"served by {arm!r}, {self.forced!r} was asked for")
        if self.served_by is not None and arm != self.served_by:
            raise WrongAnswerError(f"sticky user {self.user_id} moved from {self.served_by!r} to {arm!r}")
        self.served_by = arm


class EditorUser(Typing, FastHttpUser):
    """An editor sending its paragraph to ``POST /v1/correct`` after each pause."""

    weight = 6

    def on_start(self) -> None:
        self.start_typing()

    def wait_time(self) -> float:
        return self.think()

    @task
    def send(self) -> None:
        text = self.editor.next_text()
        payload: dict[str, object] = {"text": text, "offset_unit": self.unit, "client": {"user_id": self.user_id}}
        if self.forced is not None:
            payload["options"] = {"backend": self.forced}
        with self.client.post("/v1/correct", json=payload, name=f"correct {REFUSED}", catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code} {response.text[:200]}")
                return
            answer = response.json()
            response.request_meta["name"] = f"correct {answer['arm']}"
            try:
                header = response.headers.get("x-gecserve-arm")
                if header != answer["arm"]:
                    raise WrongAnswerError(f"header names arm {header!r}, the body {answer['arm']!r}")
                self.check_arm(answer["arm"])
                check_correction(text, answer["text"], answer["edits"], self.unit)
            except WrongAnswerError as wrong:
                response.failure(str(wrong))
                return
        for action, ids in self.react(answer["arm"], [edit["id"] for edit in answer["edits"]]).items():
            body = {"edit_ids": ids, "action": action}
            with self.client.post("/v1/feedback", json=body, name=f"feedback {action}", catch_response=True) as sent:
                if sent.status_code != 200:
                    sent.failure(f"{sent.status_code} {sent.text[:200]}")


class GrpcEditorUser(Typing, User):
    """An editor on the gRPC API: ``Corrector/Correct`` through a blocking stub, timed here."""

    weight = 3

    def on_start(self) -> None:
        self.start_typing()
        target = self.environment.parsed_options.grpc_target or f"{urlsplit(self.host).hostname}:50051"
        self.channel = grpc.insecure_channel(target)
        self.stub = pb_grpc.CorrectorStub(self.channel)

    def on_stop(self) -> None:
        self.channel.close()

    def wait_time(self) -> float:
        return self.think()

    @task
    def send(self) -> None:
        text = self.editor.next_text()
        request = pb.CorrectRequest(
            text=text,
            offset_unit=self.unit,
            options=pb.CorrectOptions(backend=self.forced or ""),
            client=pb.ClientInfo(user_id=self.user_id),
        )
        name, length, failure = f"Correct {REFUSED}", 0, None
        started = time.perf_counter()
        try:
            reply = self.stub.Correct(request, timeout=60)
        except grpc.RpcError as error:
            reply, failure = None, error
        elapsed = time.perf_counter() - started
        if reply is not None:
            name, length = f"Correct {reply.arm}", reply.ByteSize()
            edits = [
                {"offset": e.offset, "length": e.length, "original": e.original, "replacement": e.replacement}
                for e in reply.edits
            ]
            try:
                self.check_arm(reply.arm)
                check_correction(text, reply.text, edits, self.unit)
            except WrongAnswerError as wrong:
                failure = wrong
        self._fire(name, elapsed, length, failure)
        if reply is not None and failure is None:
            for action, ids in self.react(reply.arm, [edit.id for edit in reply.edits]).items():
                started = time.perf_counter()
                try:
                    self.stub.Feedback(pb.FeedbackRequest(edit_ids=ids, action=action), timeout=60)
                    failure = None
                except grpc.RpcError as error:
                    failure = error
                self._fire(f"Feedback {action}", time.perf_counter() - started, 0, failure)

    def _fire(self, name: str, seconds: float, length: int, failure: BaseException | None) -> None:
        self.environment.events.request.fire(
            request_type="grpc",
            name=name,
            response_time=seconds * 1000,
            response_length=length,
            exception=failure,
            context={},
        )


class GenerateUser(FastHttpUser):
    """A writer asking ``POST /v1/generate`` for rewrites of one sentence (beam search)."""

    weight = 1

    def on_start(self) -> None:
        self.rng = random.Random(f"{self.environment.parsed_options.seed}:generate:{next(_numbers)}")

    def wait_time(self) -> float:
        return self.rng.expovariate(1 / self.environment.parsed_options.think_time)

    @task
    def rewrite(self) -> None:
        payload = {"text": self.rng.choice(corpus), "num_return_sequences": GENERATE_SEQUENCES, "num_beams": 4}
        with self.client.post("/v1/generate", json=payload, name="generate", catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code} {response.text[:200]}")
                return
            try:
                check_rewrites(response.json()["sequences"], GENERATE_SEQUENCES)
            except WrongAnswerError as wrong:
                response.failure(str(wrong))
