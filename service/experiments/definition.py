"""An experiment's definition: the YAML file of ``gecserve serve --experiment FILE``, validated with pydantic.

    name: accelerated-vs-autoregressive
    control: autoregressive            # optional; the first arm when left out
    arms:
      - {name: accelerated, weight: 50}             # an arm named after a backend runs it unchanged
      - {name: autoregressive, weight: 50}
      - {name: draft32, backend: accelerated, weight: 0, params: {max_draft: 32}}
      - {name: v2, model: gec-v2, backend: accelerated, weight: 0}   # on another served model
    shadow: {arm: autoregressive, sample_rate: 0.1}  # optional

A bad file stops start-up with a message naming the field (``ExperimentFileError``); the same model
checks definitions and weights sent to the admin endpoints at run time.

A file's weights are relative (1 and 3 give a quarter and three quarters of the users); a running
experiment's are shares in percent that add up to 100 (``as_percent``). A change at run time names
some arms or all (``change_weights``): each arm named takes exactly the share given, and the arms
left out share the rest in proportion to their weights, so ``{"accelerated": 90}`` on a 50/50
experiment gives 90/10. Shares over 100 in all, every arm named with shares that do not add up to
100, or a rest left to arms whose weights are all 0, are refused with a message naming the arms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from service.engine.decoding.beam import check_beam_params
from service.engine.engine import takes_keep_bias
from service.experiments.arms import BACKENDS, TUNABLE, Arm

__all__ = [
    "ArmDefinition",
    "ExperimentDefinition",
    "ExperimentFileError",
    "ShadowDefinition",
    "as_percent",
    "change_weights",
    "check_weights",
    "describe",
    "load_experiment",
]

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
Weight = Annotated[float, Field(ge=0, allow_inf_nan=False, description="relative share of assigned traffic")]
SUM_TOLERANCE = 1e-6  # percent: shares that add up to 100 within this do
FRACTIONAL = ("length_penalty", "pass_cost", "keep_bias", "diversity_penalty")  # the params that are not counts


class ArmDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=NAME_PATTERN)
    backend: str | None = Field(None, description="what it runs (default: the backend of the same name)")
    weight: Weight
    params: dict[str, float] = Field(
        default_factory=dict, description="decoding knobs changed from the backend's, and the arm's batch size"
    )
    model: str | None = Field(
        None, pattern=NAME_PATTERN, description="the served model it runs on (default: the default model)"
    )

    @model_validator(mode="after")
    def _runs_a_backend(self) -> ArmDefinition:
        backend = self.backend or self.name
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
        if self.name in BACKENDS and (backend != self.name or self.params or self.model):
            raise ValueError(f"an arm named {self.name!r} runs that backend unchanged; give it another name")
        unknown = sorted(set(self.params) - set(TUNABLE))
        if unknown:
            raise ValueError(f"params {', '.join(unknown)} cannot be tuned; tunable: {', '.join(TUNABLE)}")
        if "keep_bias" in self.params and not takes_keep_bias(BACKENDS[backend].strategy):
            raise ValueError(f"backend {backend!r} decodes with {BACKENDS[backend].strategy}, which takes no keep_bias")
        if BACKENDS[backend].strategy == "beam":
            check_beam_params(self.arm().params)
        return self

    @field_validator("params")
    @classmethod
    def _whole_numbers_where_counted(cls, params: dict[str, float]) -> dict[str, float]:
        for key in ("max_batch_size", "max_draft", "num_beams", "num_beam_groups", "relaxed_top_k", "min_block"):
            if key in params and (params[key] != int(params[key]) or params[key] < (0 if key == "min_block" else 1)):
                raise ValueError(f"{key} must be a whole number >= {0 if key == 'min_block' else 1}")
        if params.get("pass_cost", 0) < 0:
            raise ValueError("pass_cost must be >= 0")
        if not -5 <= params.get("keep_bias", 0) <= 5:
            raise ValueError("keep_bias must be between -5 and 5")
        return params

    def arm(self) -> Arm:
        overrides = tuple(
            sorted((key, float(value) if key in FRACTIONAL else int(value)) for key, value in self.params.items())
        )
        return Arm(self.name, self.backend or self.name, overrides, self.model)


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

    def models(self) -> set[str]:
        """The models its arms name."""
        return {arm.model for arm in self.arms if arm.model is not None}

    def unserved(self, served: set[str]) -> list[str]:
        """The models its arms name that are not among ``served``, sorted."""
        return sorted(self.models() - served)

    @property
    def control_arm(self) -> str:
        return self.control or self.arms[0].name

    def weights(self) -> dict[str, float]:
        return {arm.name: arm.weight for arm in self.arms}


def check_weights(weights: list[float]) -> None:
    """Weights are finite, non-negative and do not all vanish (``ValueError`` otherwise)."""
    _check_finite(weights)
    if sum(weights) <= 0:
        raise ValueError("weights must not sum to zero")


def _check_finite(weights: list[float]) -> None:
    if any(not (weight >= 0 and math.isfinite(weight)) for weight in weights):
        raise ValueError("weights must be finite and not negative")


def as_percent(weights: Mapping[str, float]) -> dict[str, float]:
    """Relative weights (which do not all vanish) as shares in percent adding up to 100, in the same order."""
    total = sum(weights.values())
    return {name: 100.0 * weight / total for name, weight in weights.items()}


def change_weights(current: Mapping[str, float], changes: Mapping[str, float]) -> dict[str, float]:
    """The shares in percent, in ``current``'s order, after ``changes`` to some or all of its arms (see the
    module docstring); ``ValueError`` naming the arms when they cannot add up to 100."""
    _check_finite(list(changes.values()))
    named = sum(changes.values())
    left_out = [name for name in current if name not in changes]
    given = ", ".join(f"{name} {share:g}" for name, share in changes.items())
    if named > 100 + SUM_TOLERANCE:
        raise ValueError(f"the shares given add up to {named:g}, over 100 (given: {given})")
    if not left_out:
        if named < 100 - SUM_TOLERANCE:
            raise ValueError(f"the shares of every arm must add up to 100, not {named:g} (given: {given})")
        return {name: float(changes[name]) for name in current}
    rest = max(0.0, 100.0 - named)
    weight_left_out = sum(current[name] for name in left_out)
    if rest > SUM_TOLERANCE and weight_left_out <= 0:
        raise ValueError(
            f"{rest:g} is left over for the arms left out ({', '.join(left_out)}), but their weights are 0:"
            f" name them with their shares, so that the shares add up to 100 (given: {given})"
        )
    shares = {name: float(share) for name, share in changes.items()}
    for name in left_out:
        shares[name] = rest * current[name] / weight_left_out if weight_left_out > 0 else 0.0
    return {name: shares[name] for name in current}


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
