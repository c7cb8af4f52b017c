"""HTTP routes of A/B experiments: read the live comparison (open), change it (admin key).

GET  /v1/experiments                      arms, backends, the current experiment
GET  /v1/experiments/{name}               per-arm numbers, intervals, comparison, SRM, shadow, timeline;
                                          of the current experiment or a stopped one
POST /v1/experiments[?replace=true]       start one (body: the experiment file's fields, as JSON); 409
                                          while another runs, unless replace=true stops it
PUT  /v1/experiments/{name}/weights       {"weights": {"arm": 70, ...}}: shares in percent; the arms left
                                          out share the rest; only the buckets needed move
POST /v1/experiments/{name}/stop

Request bodies are read as JSON whatever their Content-Type says (``curl -d`` sends a form's).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from redis.exceptions import RedisError

from service.api.http.admin import ADMIN_REFUSALS, admin_guard
from service.api.responses import TextJSONResponse, documented_errors
from service.error_reasons import ErrorReason
from service.experiments.admin import ExperimentAdmin, ExperimentRunningError, UnservedModelError
from service.experiments.arms import UnknownArmError
from service.experiments.definition import ExperimentDefinition
from service.experiments.report import ExperimentReports
from service.experiments.state import ExperimentState, NoSuchExperimentError
from service.experiments.store import ConflictError
from service.pipeline.errors import RequestError, UnknownArmRequestError, UnknownModelRequestError

__all__ = ["experiments_router"]

_ERRORS = {
    400: "weights that are not valid, an arm the experiment does not have, or an arm on a model not served",
    **ADMIN_REFUSALS,
    404: "no such experiment",
    409: "another experiment is running (stop it first, or start with replace=true), or the experiment"
    " changed meanwhile (another admin or replica): read it again and retry",
    413: "body over the limit",
    422: "invalid JSON or fields",
    503: "the shared experiment store is unreachable; see Retry-After",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return documented_errors({status: _ERRORS[status] for status in statuses})


class WeightsBody(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"weights": {"accelerated": 90}}]})
    weights: dict[str, float] = Field(min_length=1, description="new shares in percent of some or all arms")


class JSONBodyRoute(APIRoute):
    """A route that reads its body as JSON whatever the Content-Type says: ``curl -d`` without ``-H`` sends
    ``application/x-www-form-urlencoded``. A body that is not JSON is still refused (422), saying so."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def read_as_json(request: Request) -> Response:
            headers = [(key, value) for key, value in request.scope["headers"] if key != b"content-type"]
            request.scope["headers"] = [*headers, (b"content-type", b"application/json")]
            try:
                return await handler(Request(request.scope, request.receive))
            except RequestValidationError as error:
                first = error.errors()[0]
                if first["type"] != "json_invalid":
                    raise
                reason = f"{first['ctx']['error']} at character {first['loc'][-1]}"
                message = f"not JSON ({reason}); the body is read as JSON whatever its Content-Type"
                raise RequestValidationError([{**first, "loc": ("body",), "msg": message}]) from error

        return read_as_json


class NotFoundError(RequestError):
    reason = ErrorReason.NOT_FOUND


class BadWeightsError(RequestError):
    reason = ErrorReason.INVALID_WEIGHTS


class ConflictRequestError(RequestError):
    reason = ErrorReason.CONFLICT


class StoreUnavailableError(RequestError):
    reason = ErrorReason.STORE_UNAVAILABLE


def _state(state: ExperimentState) -> dict[str, Any]:
    return {
        "name": state.name,
        "running": state.running,
        "weights": state.weights,
        "version": state.version,
        "started_at": state.started_at,
        "weights_since": state.weights_since,
    }


async def _change(call: Any) -> dict[str, Any]:
    """Run an admin change, turning its failures into request errors."""
    try:
        return _state(await call)
    except NoSuchExperimentError as error:
        raise NotFoundError(f"no running experiment named {error.args[0]!r}") from error
    except ExperimentRunningError as error:
        raise ConflictRequestError(
            f"experiment {error.name!r} is running: stop it first (POST /v1/experiments/{error.name}/stop),"
            " or start this one with ?replace=true, which stops it; either way its numbers stay readable"
            f" at GET /v1/experiments/{error.name}"
        ) from error
    except UnknownArmError as error:
        raise UnknownArmRequestError(str(error)) from error
    except UnservedModelError as error:
        raise UnknownModelRequestError(str(error)) from error
    except ValueError as error:
        raise BadWeightsError(str(error)) from error
    except ConflictError as error:
        raise ConflictRequestError(f"{error}; read it again and retry") from error
    except RedisError as error:
        raise StoreUnavailableError(f"the shared experiment store is unreachable: {error}", retry_after="5") from error


def experiments_router(experiments: ExperimentAdmin, reports: ExperimentReports, admin_key: Any) -> APIRouter:
    router = APIRouter(
        prefix="/v1/experiments",
        tags=["experiments"],
        default_response_class=TextJSONResponse,
        route_class=JSONBodyRoute,
    )
    guard = [Depends(admin_guard(admin_key))]

    @router.get("")
    async def overview() -> dict[str, Any]:
        """The backends, the default, and the current experiment (if any)."""
        return await reports.overview()

    @router.get("/{name}", responses=_errors(404, 422, 503))
    async def report(name: str) -> dict[str, Any]:
        """The live A/B comparison: per arm p50/p95/p99 with 95% intervals, speedups, the median test,
        the sample-ratio check, shadow agreement and recent disagreements, and a timeline. A stopped
        experiment (stopped, or replaced by another) answers too, with its numbers as they were when it
        stopped, until an experiment of the same name starts."""
        try:
            return await reports.report(name)
        except NoSuchExperimentError as error:
            raise NotFoundError(f"no experiment named {name!r}") from error
        except RedisError as error:
            raise StoreUnavailableError(
                f"the shared experiment store is unreachable: {error}", retry_after="5"
            ) from error

    @router.post("", status_code=201, dependencies=guard, responses=_errors(400, 401, 403, 409, 413, 422, 503))
    async def start(
        definition: ExperimentDefinition,
        replace: bool = Query(False, description="stop the experiment that runs, if any, and start this one"),
    ) -> dict[str, Any]:
        """Start an experiment; needs the admin key. While another runs: 409 `conflict`, naming it; stop it
        first (`POST /v1/experiments/{name}/stop`), or send `?replace=true` to stop it and start this one in
        one step. Either way the stopped experiment's numbers stay readable at `GET /v1/experiments/{name}`.
        Starting an experiment with the name of a stopped one starts it afresh: the stopped one's numbers
        are discarded. The file's weights are relative; the answer shows them as shares in percent."""
        return await _change(experiments.start(definition, replace=replace))

    @router.put("/{name}/weights", dependencies=guard, responses=_errors(400, 401, 403, 404, 409, 413, 422, 503))
    async def weights(name: str, body: WeightsBody) -> dict[str, Any]:
        """Change arm weights at run time, no restart; needs the admin key. Weights are shares of the
        assigned users in percent, adding up to 100 over the arms. Each arm named takes exactly the share
        given; the arms left out share the rest in proportion to their current weights, so
        `{"weights": {"accelerated": 90}}` on a 50/50 experiment gives 90/10. Refused with 400, naming the
        arms: shares over 100 in all, every arm named with shares that do not add up to 100, or a rest
        left to arms whose weights are all 0 (name them too). The answer shows the weights that result.
        Only the buckets the change needs move: a user changes arm only when the new shares require it."""
        return await _change(experiments.set_weights(name, body.weights))

    @router.post("/{name}/stop", dependencies=guard, responses=_errors(401, 403, 404, 409, 422, 503))
    async def stop(name: str) -> dict[str, Any]:
        """Stop assigning traffic; needs the admin key. Its numbers stay readable at
        `GET /v1/experiments/{name}`, after another experiment starts too."""
        return await _change(experiments.stop(name))

    return router
