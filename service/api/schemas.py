"""Request and response models (pydantic), with the examples shown at ``/docs``.

Both APIs validate through these models (gRPC messages are turned into them first), so a limit
is stated once, here, and holds on every path. Limits that depend on the model (the longest
generation) are filled in from it by ``generate_body``. Request models are strict, as their JSON
schema reads: ``true`` is not a number, nor ``"2"`` an integer (nor ``2.0``, stricter than the schema).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from service.engine.decoding.diverse import check_group_params
from service.engine.decoding.params import DecodeParams
from service.engine.decoding.sampling import MAX_TEMPERATURE, MIN_TEMPERATURE
from service.experiments.definition import NAME_PATTERN

CORRECT_EXAMPLE = {
    "text": "She go to school every days. Their going home.",
    "offset_unit": "codepoint",
    "options": {
        "backend": None,
        "alternatives": 0,
        "spelling": True,
        "level": "default",
        "min_confidence": None,
        "keep_bias": None,
        "language": None,
    },
    "client": {"user_id": "u-123", "session_id": "s-456"},
}


MODEL_FIELD = (
    "a served model by name (GET /v1/models); null = the arm's model, else the default. A request naming a model"
    " is served by the default backend on it, outside any experiment; an unknown name gets 400."
)


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    backend: str | None = Field(
        None,
        max_length=64,
        description="the arm to serve this request (a backend: accelerated, autoregressive, beam, diverse, relaxed; or"
        " the running experiment's arm); null = the experiment's assignment, else the default backend. Also settable"
        " with the X-Gecserve-Arm header. Unknown names get 400.",
    )
    alternatives: int = Field(
        0,
        ge=0,
        le=5,
        description="at most this many other replacements per edit, from beam search's n-best, each a plausible "
        "second choice; needs an arm with an n-best list (unset: 'beam'), else 422",
    )
    spelling: bool = Field(
        True,
        description="the spelling stage before the model (edits of type `spelling`); false turns it off for this"
        " request. It runs only where the model ships a vocabulary and GECSERVE_SPELLING is on.",
    )
    level: Literal["safe", "default", "picky"] = Field(
        "default",
        description="how sure an edit must be to be returned, as LanguageTool's `level`: `default` is the measured"
        " point, `safe` keeps only edits a careful writer would accept blindly, `picky` returns more (more errors"
        " found, more edits a writer may undo; its model also edits more)",
    )
    min_confidence: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="the confidence an edit needs (times its category's multiplier) instead of the level's: edits"
        " under it are neither returned nor applied to `text`; null = the level's",
    )
    keep_bias: float | None = Field(
        None,
        ge=-5.0,
        le=5.0,
        allow_inf_nan=False,
        description="the model's bias for keeping the writer's words, in logits, instead of `level`: above the"
        " model's default fewer edits, below it more; null = the level's. Greedy and aggressive decoding only"
        " (an arm that decodes otherwise answers 422).",
    )
    language: str | None = Field(
        None,
        max_length=16,
        description="the writer's English dialect, as LanguageTool's codes: en-US, en-GB, en-CA or en-AU (any case):"
        " words spelled the other way get suggestions of category R:SPELL:DIALECT. null = both spellings stand. The"
        " model never changes one dialect's spelling into the other's. Another code gets 400 naming those served.",
    )


class Client(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    user_id: str | None = Field(None, max_length=256)
    session_id: str | None = Field(None, max_length=256)


class CorrectBody(BaseModel):
    """Exactly one of ``text`` (one paragraph) or ``texts`` (several independent paragraphs)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [CORRECT_EXAMPLE],
            # what _one_of_text_or_texts checks, stated in the schema for clients and generators
            "oneOf": [
                {"required": ["text"], "properties": {"text": {"type": "string"}}},
                {"required": ["texts"], "properties": {"texts": {"type": "array"}}},
            ],
        },
    )
    text: str | None = Field(None, description="one paragraph of natural text")
    texts: list[str] | None = Field(None, min_length=1, description="several independent paragraphs")
    offset_unit: Literal["codepoint", "utf16"] = Field(
        "codepoint", description="unit of edit offsets; JavaScript editors count UTF-16 code units"
    )
    options: Options = Field(default_factory=Options)
    client: Client = Field(default_factory=Client)
    model: str | None = Field(None, max_length=64, description=MODEL_FIELD)

    @model_validator(mode="after")
    def _one_of_text_or_texts(self) -> CorrectBody:
        if (self.text is None) == (self.texts is None):
            raise ValueError("give exactly one of 'text' or 'texts'")
        return self


class EditModel(BaseModel):
    id: str = Field(
        description="stable while the sentence is unchanged (and the writer's own when `client` names the writer);"
        " what `POST /v1/feedback` takes"
    )
    offset: int = Field(description="start of the edit in the original text, in `offset_unit`")
    length: int = Field(description="length of the replaced span, in `offset_unit`")
    original: str
    replacement: str
    alternatives: list[str] = Field(default_factory=list)
    sentence: int = Field(description="index of the sentence in its paragraph")
    type: str = Field(description="spelling, punctuation, grammar, word_choice, capitalisation, whitespace, word_order")
    category: str = Field(
        description="ERRANT's operation (M missing, R replaced, U unnecessary) and category: R:VERB:SVA, M:DET,"
        " R:SPELL, U:PUNCT, ..."
    )
    message: str = Field(description="what is wrong and why, for the writer")
    confidence: float = Field(
        description="the probability that the edit is right, 0..1, calibrated: of the edits given 0.8, about 80% are"
        " right"
    )


class ModelInfo(BaseModel):
    name: str
    version: str


class TimingsMs(BaseModel):
    preprocess: float
    cache: float
    queue: float
    inference: float
    review: float
    postprocess: float
    total: float


class CorrectionModel(BaseModel):
    text: str
    edits: list[EditModel]


class CorrectResponse(BaseModel):
    """For a ``text`` request: ``text`` and ``edits``. For ``texts``: ``results`` in order."""

    text: str | None = None
    edits: list[EditModel] | None = None
    results: list[CorrectionModel] | None = None
    model: ModelInfo
    arm: str = Field(description="the arm that served the request (also the X-Gecserve-Arm response header)")
    backend: str = Field(description="the decoding that arm runs")
    experiment: str | None = Field(None, description="the experiment that assigned the request, if one did")
    timings_ms: TimingsMs


class GenerateBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {
                    "text": "I has a idea for the project.",
                    "num_return_sequences": 3,
                    "strategy": "beam",
                    "num_beams": 4,
                },
                {
                    "text": "I has a idea for the project.",
                    "num_return_sequences": 3,
                    "strategy": "beam",
                    "num_beams": 6,
                    "num_beam_groups": 3,
                    "diversity_penalty": 1.0,
                },
            ]
        },
    )
    text: str
    num_return_sequences: int = Field(1, ge=1, le=8)
    strategy: Literal["beam", "sample"] = "beam"
    num_beams: int = Field(4, ge=1, le=16)
    num_beam_groups: int = Field(
        1,
        ge=1,
        le=16,
        description="beam search: split the beams into this many groups that are kept apart (diverse beam search);"
        " must divide num_beams; 1 = plain beam search",
    )
    diversity_penalty: float = Field(
        0.0,
        ge=0.0,
        le=100.0,
        allow_inf_nan=False,
        description="diverse beam search: subtracted from a token's log-probability for each beam of an earlier group"
        " that chose it at the same step; above 0 exactly when num_beam_groups > 1",
    )
    temperature: float = Field(
        1.0,
        ge=0.0,
        le=MAX_TEMPERATURE,
        allow_inf_nan=False,
        description=f"sampling temperature: 0 (greedy) or {MIN_TEMPERATURE:g}..{MAX_TEMPERATURE:g}",
    )
    top_k: int = Field(0, ge=0, le=1_000_000, description="0 = no top-k filter")
    top_p: float = Field(1.0, gt=0.0, le=1.0, allow_inf_nan=False)
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="same seed and text -> same samples")
    max_new_tokens: int | None = Field(None, ge=1, description="tokens to generate per sentence, </s> included")
    model: str | None = Field(None, max_length=64, description="a served model by name; null = the default")

    @field_validator("temperature")
    @classmethod
    def _greedy_or_warm_enough(cls, value: float) -> float:
        if 0.0 < value < MIN_TEMPERATURE:
            raise ValueError(f"temperature must be 0 (greedy) or at least {MIN_TEMPERATURE:g}")
        return value

    @model_validator(mode="after")
    def _enough_beams(self) -> GenerateBody:
        if self.strategy == "beam" and self.num_beams < self.num_return_sequences:
            raise ValueError("num_beams must be at least num_return_sequences")
        if self.strategy != "beam" and (self.num_beam_groups > 1 or self.diversity_penalty):
            raise ValueError("num_beam_groups and diversity_penalty are beam search's (strategy 'beam')")
        if self.strategy == "beam":
            check_group_params(
                DecodeParams(
                    num_beams=self.num_beams,
                    num_beam_groups=self.num_beam_groups,
                    diversity_penalty=self.diversity_penalty,
                )
            )
        return self


def generate_body(max_new_tokens: int) -> type[GenerateBody]:
    """``GenerateBody`` with the served model's longest generation as the limit of ``max_new_tokens``."""
    field: Any = (
        int | None,
        Field(None, ge=1, le=max_new_tokens, description="tokens to generate per sentence, </s> included"),
    )
    return create_model("GenerateBody", __base__=GenerateBody, max_new_tokens=field)


class SequenceModel(BaseModel):
    text: str
    score: float


class GenerateResponse(BaseModel):
    sequences: list[SequenceModel]
    model: ModelInfo
    timings_ms: TimingsMs


EDIT_ID = r"^[0-9a-f]{1,64}$"


class FeedbackBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"edit_ids": ["3fa2c81b9d0e"], "action": "accepted"}]},
    )
    edit_ids: list[Annotated[str, Field(pattern=EDIT_ID)]] = Field(
        min_length=1, max_length=1000, description="the `id`s of edits earlier answers carried"
    )
    action: Literal["accepted", "dismissed"] = Field(description="what the writer did with each suggestion")


class FeedbackResponse(BaseModel):
    counted: int = Field(description="ids whose feedback was counted now (new, or moved from the other action)")
    repeated: int = Field(description="ids already counted with this action: counted once")


class LoadModelBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"name": "gec-v2", "path": "models/gec-v2", "default": False}]},
    )
    name: str = Field(pattern=NAME_PATTERN, description="the name it is served under")
    path: str = Field(min_length=1, max_length=4096, description="its model folder, on the server")
    default: bool = Field(False, description="make it the default model once it is ready")


class ErrorModel(BaseModel):
    reason: str = Field(
        description="short code: invalid, unknown_arm, too_large, overloaded, deadline, unauthorized, rate_limited, ..."
    )
    message: str
    request_id: str = Field(description="the request's id (also the X-Request-Id response header)")


class ErrorResponse(BaseModel):
    error: ErrorModel
