"""An experiment's definition: the YAML file of ``gecserve serve --experiment FILE``, validated with pydantic.

    name: accelerated-vs-autoregressive
    control: autoregressive            # optional; the first arm when left out
    arms:
      - {name: accelerated, weight: 50}             # an arm named after a backend runs it unchanged
      - {name: autoregressive, weight: 50}
      - {name: draft32, backend: accelerated, weight: 0, params: {max_draft: 32}}
    shadow: {arm: autoregressive, sample_rate: 0.1}  # optional

A bad file stops start-up with a message naming the field (``ExperimentFileError``); the same model
checks definitions and weights sent to the admin endpoints at run time.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from service.experiments.arms import BACKENDS, TUNABLE, Arm

__all__ = [
    "ArmDefinition",
    "ExperimentDefinition",
    "ExperimentFileError",
    "ShadowDefinition",
    "check_weights",
    "describe",
    "load_experiment",
]

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
Weight = Annotated[float, Field(ge=0, allow_inf_nan=False, description="relative share of assigned traffic")]


class ArmDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=NAME_PATTERN)
    backend: str | None = Field(None, description="what it runs (default: the backend of the same name)")
    weight: Weight
    params: dict[str, float] = Field(
        default_factory=dict, description="decoding knobs changed from the backend's, and the arm's batch size"
    )

    @model_validator(mode="after")
    def _runs_a_backend(self) -> ArmDefinition:
        backend = self.backend or self.name
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
        if self.name in BACKENDS and (backend != self.name or self.params):
            raise ValueError(f"an arm named {self.name!r} runs that backend unchanged; give it another name")
        unknown = sorted(set(self.params) - set(TUNABLE))
        if unknown:
            raise ValueError(f"params {', '.join(unknown)} cannot be tuned; tunable: {', '.join(TUNABLE)}")
        return self

    @field_validator("params")
    @classmethod
    def _whole_numbers_where_counted(cls, params: dict[str, float]) -> dict[str, float]:
        for key in ("max_batch_size", "max_draft", "num_beams", "relaxed_top_k", "min_block"):
            if key in params and (params[key] != int(params[key]) or params[key] < (0 if key == "min_block" else 1)):
                raise ValueError(f"{key} must be a whole number >= {0 if key == 'min_block' else 1}")
        if params.get("pass_cost", 0) < 0:
            raise ValueError("pass_cost must be >= 0")
        return params

    def arm(self) -> Arm:
        overrides = tuple(
            sorted(
                (key, value if key in ("length_penalty", "pass_cost") else int(value))
                for key, value in self.params.items()
            )
        )
        return Arm(self.name, self.backend or self.name, overrides)


class ShadowDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    arm: str = Field(description="the arm that also runs the sampled requests' sentences, after the response")
    sample_rate: float = Field(gt=0, le=1, allow_inf_nan=False, description="share of assigned requests shadowed")


class ExperimentDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    control: str | None = Field(None, description="the arm the others are compared with (default: the first)")
    arms: list[ArmDefinition] = Field(min_length=2)
    shadow: ShadowDefinition | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ExperimentDefinition:
        names = [arm.name for arm in self.arms]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"arm names must be unique: {', '.join(duplicates)}")
        check_weights([arm.weight for arm in self.arms])
        if self.control is not None and self.control not in names:
            raise ValueError(f"control {self.control!r} is not one of the arms ({', '.join(names)})")
        if self.shadow is not None and self.shadow.arm not in names and self.shadow.arm not in BACKENDS:
            known = ", ".join(dict.fromkeys([*names, *BACKENDS]))
            raise ValueError(f"shadow arm {self.shadow.arm!r} is not one of {known}")
        return self

    @property
    def control_arm(self) -> str:
        return self.control or self.arms[0].name

    def weights(self) -> dict[str, float]:
        return {arm.name: arm.weight for arm in self.arms}


def check_weights(weights: list[float]) -> None:
    """Weights are finite, non-negative and do not all vanish (``ValueError`` otherwise)."""
    if any(not (weight >= 0 and math.isfinite(weight)) for weight in weights):
        raise ValueError("weights must be finite and not negative")
    if sum(weights) <= 0:
        raise ValueError("weights must not sum to zero")


class ExperimentFileError(ValueError):
    """An experiment file that cannot be used; the message names the file and the field."""


def load_experiment(path: Path) -> ExperimentDefinition:
    """Read and validate an experiment file (``ExperimentFileError`` naming the field when it is wrong)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ExperimentFileError(f"{path}: {error}") from error
    try:
        return ExperimentDefinition.model_validate(data)
    except ValidationError as error:
        raise ExperimentFileError(f"{path}: {describe(error)}") from error


def describe(error: ValidationError) -> str:
    """One line per problem, each naming its field (``arms.1.weight: ...``)."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in error.errors())
