"""Framework-free request and response shapes of the pipeline (the APIs translate to and from these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from service.text.confidence import TokenScores
from service.text.units import TypedEdit


@dataclass(frozen=True)
class UnitOutputs:
    """What the model wrote for one unit: its outputs, best first (reviewed where the model ships a language model),
    and the best one's tokens' log-probabilities as decoded (None where the decoding records none)."""

    texts: list[str]
    scores: TokenScores | None = None

    def to_json(self) -> dict[str, Any]:
        return {"texts": self.texts, "scores": self.scores.to_json() if self.scores is not None else None}

    @classmethod
    def from_json(cls, data: Any) -> UnitOutputs:
        """``to_json``'s form, or a list of texts (what the sentence cache held before scores)."""
        if isinstance(data, list):
            return cls([str(text) for text in data])
        scores = data.get("scores")
        return cls(list(data["texts"]), TokenScores.from_json(scores) if scores is not None else None)


@dataclass(frozen=True)
class CorrectRequest:
    texts: list[str]
    single: bool  # the request used `text` (one paragraph) rather than `texts`
    offset_unit: str = "codepoint"  # or "utf16"
    arm: str | None = None  # an override: options.backend, the X-Gecserve-Arm header or gRPC metadata
    alternatives: int = 0
    spelling: bool = True  # the spelling stage (where the model ships a vocabulary)
    level: str = "default"  # "safe", "default" or "picky": its confidence threshold and keep bias
    keep_bias: float | None = None  # a keep bias of its own instead of the level's
    min_confidence: float | None = None  # a confidence threshold of its own instead of the level's
    user_id: str | None = None
    session_id: str | None = None
    model: str | None = None  # a served model by name (None: the arm's, else the default)
    language: str | None = None  # an English dialect's code (``service.text.dialects``); None: both spellings stand


@dataclass(frozen=True)
class EditOut:
    """An edit as the API returns it, offsets already in the requested unit."""

    id: str
    offset: int
    length: int
    original: str
    replacement: str
    alternatives: list[str]
    sentence: int
    type: str
    category: str  # ERRANT's operation and category: "R:VERB:SVA"
    message: str  # what the edit tells the writer
    confidence: float  # the probability that the edit is right, 0..1


@dataclass
class Correction:
    text: str
    edits: list[EditOut]


@dataclass
class Timings:
    """Seconds in each stage (for queue and inference: the longest any of the request's sentences spent there)."""

    preprocess: float = 0.0
    cache: float = 0.0
    queue: float = 0.0
    inference: float = 0.0
    review: float = 0.0  # the language model's review of the decoded sentences, where the model ships one
    postprocess: float = 0.0
    total: float = 0.0

    def stages(self) -> dict[str, float]:
        """Every stage but the total."""
        return {k: v for k, v in self.__dict__.items() if k != "total"}

    def as_ms(self) -> dict[str, float]:
        return {k: round(v * 1e3, 3) for k, v in self.__dict__.items()}


@dataclass
class CorrectResult:
    corrections: list[Correction]
    model_name: str
    model_version: str
    arm: str  # what served it
    backend: str  # the decoding that arm runs
    experiment: str | None  # the experiment that assigned it, if one did
    timings: Timings = field(default_factory=Timings)


@dataclass(frozen=True)
class GenerateRequest:
    text: str
    num_return_sequences: int = 1
    strategy: str = "beam"
    num_beams: int = 4
    num_beam_groups: int = 1
    diversity_penalty: float = 0.0
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    max_new_tokens: int | None = None
    model: str | None = None  # a served model by name (None: the default)


@dataclass(frozen=True)
class FeedbackRequest:
    edit_ids: list[str]
    action: str  # "accepted" or "dismissed"


@dataclass(frozen=True)
class FeedbackReport:
    counted: int  # ids whose feedback changed the counts
    repeated: int  # ids already counted with this action (counted once)


@dataclass
class GenerateResult:
    sequences: list[tuple[str, float]]
    model_name: str
    model_version: str
    timings: Timings = field(default_factory=Timings)


__all__ = [
    "CorrectRequest",
    "CorrectResult",
    "Correction",
    "EditOut",
    "FeedbackReport",
    "FeedbackRequest",
    "GenerateRequest",
    "GenerateResult",
    "Timings",
    "TypedEdit",
]
