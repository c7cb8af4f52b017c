"""Schemathesis against a running server's own ``/openapi.json``: every operation, valid and invalid
requests generated from the schema, over real HTTP.

Checked on every answer: no 5xx; the status is one the operation declares; the content type and
the body match what the schema declares for that status; and a request that breaks the schema is
refused (4xx). Not checked: that every valid request is accepted, since the schema cannot say which
arm names, experiment names or text lengths the running server accepts (those answer 400, 404, 413,
each declared). The server runs an experiment and has an admin key, so the admin endpoints are
reached past their guard, and small limits, so that each case is cheap.

A second run fuzzes a server that requires API keys: valid cases present a key; cases without
one, with a wrong one, and invalid ones with a wrong one must get the 401 ``unauthorized`` answer
on every guarded route (the key is checked before anything else), never a 5xx; and no key, right
or wrong, may appear in the server's (debug) log.

The figures (cases run, 5xx found, time) are printed and go in docs/reliability.md.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.api.access.auth import hash_key
from service.api.access.control import OPEN_PATHS, OPEN_PREFIXES, SELF_CHECKED
from tests.system.server import RunningServer, start_server
from tests.system.test_experiments import EXPERIMENT, KEY

pytestmark = [pytest.mark.slow, pytest.mark.server]

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
# Cases per operation and mode. Operations without inputs have one request to make.
POSITIVE, NEGATIVE = 200, 120
MIN_CASES = 1000
# Valid cases carry the admin key, and a deadline a request can meet: a client that asks for 1 ms
# (X-Gecserve-Timeout-Ms) rightly gets 503 or 504, which is no server fault. Invalid cases send
# what they generate (so an invalid deadline must get 422).
HEADERS = {"Authorization": f"Bearer {KEY}", "X-Gecserve-Timeout-Ms": "30000"}
RUNNING = {"name": EXPERIMENT["name"]}  # half the {name} cases name the running experiment
# The keyed run: fewer cases (the unkeyed run covers the inputs; this one the key check before them).
API_KEY, WRONG_KEY = "fuzz-api-Hq3vT8mZ2cW5", "fuzz-wrong-Rb6nY1kP4sJ7"
KEYED, UNKEYED, KEYED_MIN_CASES = 30, 10, 600
Expect = Callable[..., None]


def _server(folder, **settings: object) -> RunningServer:
    path = folder / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    return start_server(
        folder, experiment=path, admin_key=KEY, max_text_chars=200, max_texts=4, request_timeout_s=30, **settings
    )


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory) -> Iterator[RunningServer]:
    running = _server(tmp_path_factory.mktemp("fuzz"), log_level="WARNING")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def keyed_fuzz_server(tmp_path_factory) -> Iterator[RunningServer]:
    running = _server(tmp_path_factory.mktemp("keyed-fuzz"), api_keys=f"fuzz:{hash_key(API_KEY)}", log_level="DEBUG")
    yield running
    running.stop()


@dataclass
class Tally:
    cases: Counter[str] = field(default_factory=Counter)  # by operation
    statuses: Counter[int] = field(default_factory=Counter)
    by_operation: dict[str, Counter[int]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


def _fuzz(
    operation, mode: GenerationMode, examples: int, tally: Tally, base_url: str, expect: Expect | None = None, **fixed
) -> None:
    """Up to ``examples`` generated cases of ``operation``, each answer checked, then by ``expect(case,
    response)``; a failure is recorded, not raised, so that every operation is fuzzed and all failures
    are reported together."""

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(operation.as_strategy(generation_mode=mode, **fixed))
    def run(case) -> None:
        tally.cases[operation.label] += 1
        response = case.call(base_url=base_url, timeout=60)
        tally.statuses[response.status_code] += 1
        tally.by_operation.setdefault(operation.label, Counter())[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)
        if expect is not None:
            expect(case, response)

    try:
        run()
    except Unsatisfiable:  # no request breaks this schema (a path's free string): nothing to send
        assert mode is GenerationMode.NEGATIVE
    except (Exception, BaseExceptionGroup) as error:  # a check failed (shrunk by Hypothesis): keep its report
        tally.failures[f"{operation.label} ({mode.value}, {len(tally.failures)})"] = str(error)[:3000]


def test_generated_requests_get_no_5xx_and_conforming_answers(fuzz_server: RunningServer) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzz_server.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 18, [op.label for op in operations]
    tally = Tally()
    started = time.monotonic()
    for operation in operations:
        has_inputs = bool(operation.body or list(operation.iter_parameters()))
        fixed: dict = {"headers": HEADERS}
        if "{name}" in operation.path:
            _fuzz(
                operation,
                GenerationMode.POSITIVE,
                POSITIVE // 2,
                tally,
                fuzz_server.url,
                **fixed,
                path_parameters=RUNNING,
            )
        _fuzz(operation, GenerationMode.POSITIVE, POSITIVE if has_inputs else 1, tally, fuzz_server.url, **fixed)
        if has_inputs:
            _fuzz(operation, GenerationMode.NEGATIVE, NEGATIVE, tally, fuzz_server.url)
    seconds = time.monotonic() - started
    total = sum(tally.cases.values())
    print(
        f"\nschemathesis {schemathesis.__version__}: {total} cases over {len(operations)} operations in"
        f" {seconds:.1f} s; statuses {dict(sorted(tally.statuses.items()))}; 5xx: {tally.server_errors}"
    )
    for label, cases in tally.cases.items():
        print(f"  {label}: {cases} {dict(sorted(tally.by_operation.get(label, Counter()).items()))}")
    assert not tally.failures, "\n\n".join(f"{name}:\n{report}" for name, report in tally.failures.items())
    assert tally.server_errors == 0
    assert {op.label for op in operations} == set(tally.cases), "an operation got no case"
    assert total >= MIN_CASES


def _guarded(path: str) -> bool:
    """True for the routes that need a key (``service.api.access.control``)."""
    return path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES)


def _refused_for_its_key(case, response) -> None:
    """A guarded route without a valid key: 401 before anything else, in the error shape with a challenge."""
    if not _guarded(case.operation.path):
        return
    assert response.status_code == 401, f"{response.status_code} without a valid key"
    if case.operation.path in SELF_CHECKED:  # LanguageTool's plain-text errors
        return
    headers = {name.lower(): values[0] for name, values in response.headers.items()}
    error = response.json()["error"]
    assert error["reason"] == "unauthorized" and error["request_id"] == headers["x-request-id"]
    assert headers["www-authenticate"].startswith("Bearer")


def _not_refused_for_its_key(case, response) -> None:
    fields = [case.query or {}, case.body if isinstance(case.body, dict) else {}]
    if any("apiKey" in given for given in fields):  # /v2/check: its own credential field, generated: not a key
        return
    assert response.status_code != 401, "a valid key was refused"


def test_with_api_keys_unkeyed_requests_get_401_and_keys_never_reach_the_log(keyed_fuzz_server: RunningServer) -> None:
    server = keyed_fuzz_server
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    tally = Tally()
    started = time.monotonic()
    timeout = {"X-Gecserve-Timeout-Ms": "30000"}
    wrong = [{"Authorization": f"Bearer {WRONG_KEY}"}, {"X-Api-Key": WRONG_KEY}]
    for operation in operations:
        has_inputs = bool(operation.body or list(operation.iter_parameters()))
        # /v1/experiments/... and /v1/models changes: admin routes take the admin key, which is a valid key too.
        admin = operation.method != "get" and operation.path.startswith(("/v1/experiments", "/v1/models"))
        key = KEY if admin else API_KEY
        keyed = {**timeout, "Authorization": f"Bearer {key}"}
        positive = KEYED if has_inputs else 1
        _fuzz(operation, GenerationMode.POSITIVE, positive, tally, server.url, _not_refused_for_its_key, headers=keyed)
        for headers in [timeout, *({**timeout, **w} for w in wrong)]:
            examples = UNKEYED if has_inputs else 1
            _fuzz(
                operation, GenerationMode.POSITIVE, examples, tally, server.url, _refused_for_its_key, headers=headers
            )
        if has_inputs:
            _fuzz(
                operation, GenerationMode.NEGATIVE, UNKEYED, tally, server.url, _refused_for_its_key, headers=wrong[0]
            )
    seconds = time.monotonic() - started
    total = sum(tally.cases.values())
    print(
        f"\nschemathesis {schemathesis.__version__}, API keys on: {total} cases over {len(operations)} operations in"
        f" {seconds:.1f} s; statuses {dict(sorted(tally.statuses.items()))}; 5xx: {tally.server_errors}"
    )
    assert not tally.failures, "\n\n".join(f"{name}:\n{report}" for name, report in tally.failures.items())
    assert tally.server_errors == 0
    assert tally.statuses[401] > 0 and tally.statuses[200] > 0
    assert total >= KEYED_MIN_CASES
    log = server.log()
    assert "access refused" in log  # the refusals were logged (debug level), without the keys
    for secret in (API_KEY, WRONG_KEY, KEY):
        assert secret not in log
