"""HTTP routes of A/B experiments: read the live comparison (open), change it (admin key).

GET  /v1/experiments                      arms, backends, the current experiment
GET  /v1/experiments/{name}               per-arm numbers, intervals, comparison, SRM, shadow, timeline
POST /v1/experiments                      start one (body: the experiment file's fields, as JSON)
PUT  /v1/experiments/{name}/weights       {"weights": {"arm": 70, ...}}: only the buckets needed move
POST /v1/experiments/{name}/stop
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field
from redis.exceptions import RedisError

from service.api.admin import admin_guard
from service.api.responses import TextJSONResponse, documented_errors
from service.experiments.arms import UnknownArmError
from service.experiments.definition import ExperimentDefinition
from service.experiments.manager import ExperimentManager, NoSuchExperimentError
from service.experiments.state import ExperimentState
from service.experiments.store import ConflictError
from service.pipeline.errors import RequestError, UnknownArmRequestError

__all__ = ["experiments_router"]

_ERRORS = {
    400: "weights that are not valid, or an arm the experiment does not have",
    401: "no admin key, or a wrong one",
    403: "admin endpoints are disabled (no GECSERVE_ADMIN_KEY)",
    404: "no such experiment",
    409: "the experiment changed meanwhile (another admin or replica): read it again and retry",
    413: "body over the limit",
    422: "invalid JSON or fields",
    503: "the shared experiment store is unreachable; see Retry-After",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return documented_errors({status: _ERRORS[status] for status in statuses})


class WeightsBody(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"weights": {"accelerated": 90}}]})
    weights: dict[str, float] = Field(min_length=1, description="new weights of some or all arms")


class NotFoundError(RequestError):
    status, reason = 404, "not_found"


class BadWeightsError(RequestError):
    status, reason = 400, "invalid_weights"


class ConflictRequestError(RequestError):
    status, reason = 409, "conflict"


class StoreUnavailableError(RequestError):
    status, reason = 503, "store_unavailable"


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
    except UnknownArmError as error:
        raise UnknownArmRequestError(str(error)) from error
    except ValueError as error:
        raise BadWeightsError(str(error)) from error
    except ConflictError as error:
        raise ConflictRequestError(f"{error}; read it again and retry") from error
    except RedisError as error:
        raise StoreUnavailableError(f"the shared experiment store is unreachable: {error}", retry_after="5") from error


def experiments_router(experiments: ExperimentManager, admin: Any) -> APIRouter:
    router = APIRouter(prefix="/v1/experiments", tags=["experiments"], default_response_class=TextJSONResponse)
    guard = [Depends(admin_guard(admin))]

    @router.get("")
    async def overview() -> dict[str, Any]:
        """The backends, the default, and the current experiment (if any)."""
        return await experiments.overview()

    @router.get("/{name}", responses=_errors(404, 422))
    async def report(name: str) -> dict[str, Any]:
        """The live A/B comparison: per arm p50/p95/p99 with 95% intervals, speedups, the median test,
        the sample-ratio check, shadow agreement and recent disagreements, and a timeline."""
        try:
            return await experiments.report(name)
        except NoSuchExperimentError as error:
            raise NotFoundError(f"no experiment named {name!r}") from error

    @router.post("", status_code=201, dependencies=guard, responses=_errors(400, 401, 403, 409, 413, 422, 503))
    async def start(definition: ExperimentDefinition) -> dict[str, Any]:
        """Start an experiment (replacing the current one); needs the admin key."""
        return await _change(experiments.start(definition))

    @router.put("/{name}/weights", dependencies=guard, responses=_errors(400, 401, 403, 404, 409, 413, 422, 503))
    async def weights(name: str, body: WeightsBody) -> dict[str, Any]:
        """Change arm weights at run time, no restart; needs the admin key."""
        return await _change(experiments.set_weights(name, body.weights))

    @router.post("/{name}/stop", dependencies=guard, responses=_errors(401, 403, 404, 409, 422, 503))
    async def stop(name: str) -> dict[str, Any]:
        """Stop assigning traffic (its numbers stay readable); needs the admin key."""
        return await _change(experiments.stop(name))

    return router
