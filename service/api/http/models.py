"""HTTP routes of the model repository: list the served models (open), load, swap and unload them (admin key).

GET    /v1/models          every model: name, version, variant, parameters, quality figures, memory, state
POST   /v1/models          {"name", "path", "default"}: load a model folder and serve it under ``name`` once it is
                           warmed up; a name already served is swapped (its requests finish on the old one)
DELETE /v1/models/{name}   stop serving it: its queued and running work drains first

In the process layout (``--front-ends``) the models are those the service started with: a front end cannot start an
engine process or reach its siblings, so loading and unloading answer 409 there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import SecretStr

from service.api import schemas
from service.api.http.admin import ADMIN_REFUSALS, admin_guard
from service.api.http.experiments import ConflictRequestError, JSONBodyRoute, NotFoundError
from service.api.responses import TextJSONResponse, documented_errors
from service.engine.manifest import ModelFolderError
from service.error_reasons import ErrorReason
from service.experiments.admin import ExperimentAdmin
from service.pipeline.errors import RequestError
from service.pipeline.served import ServedModel
from service.repository.repository import ModelInUseError, ModelLimitError, ModelRepository, UnknownModelError
from service.repository.sources import ModelSource

__all__ = ["models_router"]


class BadModelError(RequestError):
    """A folder that cannot be served; the message names the file at fault."""

    reason = ErrorReason.BAD_MODEL


class ModelLimitRequestError(RequestError):
    reason = ErrorReason.MODEL_LIMIT


LAYOUT_FIXED = (
    "the process layout (--front-ends) serves the models it started with (GECSERVE_MODELS): restart it to change them"
)


def _refuse_changes() -> None:
    raise ConflictRequestError(LAYOUT_FIXED)


def models_router(
    models: ModelRepository[ServedModel], experiments: ExperimentAdmin, admin: SecretStr | None, fixed: bool
) -> APIRouter:
    """The routes of ``models``; ``fixed``: the process layout's front end, whose models cannot change."""
    router = APIRouter(
        prefix="/v1/models", tags=["models"], default_response_class=TextJSONResponse, route_class=JSONBodyRoute
    )
    guard = [Depends(admin_guard(admin))]
    changes = [*guard, Depends(_refuse_changes)] if fixed else guard  # loading and unloading

    @router.get("")
    async def listing() -> dict[str, Any]:
        """Every model: loading, ready or draining; which is the default; the limits and the memory they take."""
        return models.describe()

    @router.post(
        "",
        status_code=201,
        dependencies=changes,
        responses=documented_errors(
            {
                400: "the folder cannot be served (the message names the file at fault)",
                **ADMIN_REFUSALS,
                409: "over GECSERVE_MAX_MODELS or the memory budget (GECSERVE_MODEL_MEMORY_MB), or the process "
                "layout (--front-ends), whose models are those it started with",
                422: "invalid JSON or fields",
            }
        ),
    )
    async def load(body: schemas.LoadModelBody) -> dict[str, Any]:
        """Load a model folder (a path on the server) and serve it under `name` once it is loaded and warmed up;
        needs the admin key. A name already served is swapped: new requests go to the new model at once, those
        in flight finish on the old one, which then drains. `default: true` makes it the default model (requests
        that name none). The models already serving go on serving while it loads, and when it fails. Refused in
        the process layout (`--front-ends`), which serves the models it started with."""
        try:
            model = await models.load(ModelSource(body.name, Path(body.path)), make_default=body.default)
        except ModelFolderError as error:
            raise BadModelError(str(error)) from error
        except ModelLimitError as error:
            raise ModelLimitRequestError(str(error)) from error
        return model.describe(default=models.default_name == model.name)

    @router.delete(
        "/{name}",
        dependencies=changes,
        responses=documented_errors(
            {
                **ADMIN_REFUSALS,
                404: "no model of that name is served",
                409: "it is the default model, the running experiment's arms run on it, or the process layout "
                "(--front-ends) serves it",
            }
        ),
    )
    async def unload(name: str) -> dict[str, Any]:
        """Stop serving a model, once its queued and running work is done; needs the admin key. Refused for the
        default model, for a model the running experiment's arms run on (stop the experiment first), and in the
        process layout (`--front-ends`)."""
        running = experiments.using(name)
        if running is not None:
            raise ConflictRequestError(f"the running experiment {running!r} has arms on {name!r}: stop it first")
        try:
            model = await models.unload(name)
        except UnknownModelError as error:
            raise NotFoundError(str(error)) from error
        except ModelInUseError as error:
            raise ConflictRequestError(str(error)) from error
        return model.describe(default=False)

    return router
