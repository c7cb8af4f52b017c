"""HTTP request and response models (pydantic), with the examples shown at ``/docs``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CORRECT_EXAMPLE = {
    "text": "She go to school every days. Their going home.",
    "offset_unit": "codepoint",
    "options": {"backend": None, "alternatives": 0},
    "client": {"user_id": "u-123", "session_id": "s-456"},
}


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: Literal["accelerated", "autoregressive"] | None = Field(
        None, description="decoding backend; null = the configured default (or the experiment's choice)"
    )
    alternatives: int = Field(0, ge=0, le=5, description="alternatives per edit from beam-search n-best")


class Client(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user_id: str | None = Field(None, max_length=256)
    session_id: str | None = Field(None, max_length=256)


class CorrectBody(BaseModel):
    """Exactly one of ``text`` (one paragraph) or ``texts`` (several independent paragraphs)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [CORRECT_EXAMPLE]})
    text: str | None = Field(None, description="one paragraph of natural text")
    texts: list[str] | None = Field(None, min_length=1, description="several independent paragraphs")
    offset_unit: Literal["codepoint", "utf16"] = Field(
        "codepoint", description="unit of edit offsets; JavaScript editors count UTF-16 code units"
    )
    options: Options = Field(default_factory=Options)
    client: Client = Field(default_factory=Client)

    @model_validator(mode="after")
    def _one_of_text_or_texts(self) -> CorrectBody:
        if (self.text is None) == (self.texts is None):
            raise ValueError("give exactly one of 'text' or 'texts'")
        return self


class EditModel(BaseModel):
    id: str = Field(description="stable while the sentence is unchanged")
    offset: int = Field(description="start of the edit in the original text, in `offset_unit`")
    length: int = Field(description="length of the replaced span, in `offset_unit`")
    original: str
    replacement: str
    alternatives: list[str] = Field(default_factory=list)
    sentence: int = Field(description="index of the sentence in its paragraph")
    type: str = Field(description="spelling, punctuation, grammar, word_choice, capitalisation, whitespace, word_order")


class ModelInfo(BaseModel):
    name: str
    version: str


class TimingsMs(BaseModel):
    queue: float
    preprocess: float
    inference: float
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
    backend: Literal["accelerated", "autoregressive"]
    timings_ms: TimingsMs


class GenerateBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"text": "I has a idea for the project.", "num_return_sequences": 3, "strategy": "beam", "num_beams": 4}
            ]
        },
    )
    text: str
    num_return_sequences: int = Field(1, ge=1, le=8)
    strategy: Literal["beam", "sample"] = "beam"
    num_beams: int = Field(4, ge=1, le=16)
    temperature: float = Field(1.0, ge=0.0, le=10.0)
    top_k: int = Field(0, ge=0, description="0 = no top-k filter")
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="same seed and text -> same samples")
    max_new_tokens: int | None = Field(None, ge=1, le=1024)


class SequenceModel(BaseModel):
    text: str
    score: float


class GenerateResponse(BaseModel):
    sequences: list[SequenceModel]
    model: ModelInfo
    timings_ms: TimingsMs


class ErrorModel(BaseModel):
    reason: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorModel
