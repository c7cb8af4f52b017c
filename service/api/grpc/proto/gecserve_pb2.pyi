from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CorrectOptions(_message.Message):
    __slots__ = ("backend", "alternatives", "spelling", "level", "keep_bias", "min_confidence", "language")
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    ALTERNATIVES_FIELD_NUMBER: _ClassVar[int]
    SPELLING_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    KEEP_BIAS_FIELD_NUMBER: _ClassVar[int]
    MIN_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    backend: str
    alternatives: int
    spelling: bool
    level: str
    keep_bias: float
    min_confidence: float
    language: str
    def __init__(self, backend: _Optional[str] = ..., alternatives: _Optional[int] = ..., spelling: _Optional[bool] = ..., level: _Optional[str] = ..., keep_bias: _Optional[float] = ..., min_confidence: _Optional[float] = ..., language: _Optional[str] = ...) -> None: ...

class ClientInfo(_message.Message):
    __slots__ = ("user_id", "session_id")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    session_id: str
    def __init__(self, user_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class CorrectRequest(_message.Message):
    __slots__ = ("text", "texts", "offset_unit", "options", "client", "model")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    OFFSET_UNIT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    text: str
    texts: _containers.RepeatedScalarFieldContainer[str]
    offset_unit: str
    options: CorrectOptions
    client: ClientInfo
    model: str
    def __init__(self, text: _Optional[str] = ..., texts: _Optional[_Iterable[str]] = ..., offset_unit: _Optional[str] = ..., options: _Optional[_Union[CorrectOptions, _Mapping]] = ..., client: _Optional[_Union[ClientInfo, _Mapping]] = ..., model: _Optional[str] = ...) -> None: ...

class Edit(_message.Message):
    __slots__ = ("id", "offset", "length", "original", "replacement", "alternatives", "sentence", "type", "category", "message", "confidence")
    ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    ALTERNATIVES_FIELD_NUMBER: _ClassVar[int]
    SENTENCE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    id: str
    offset: int
    length: int
    original: str
    replacement: str
    alternatives: _containers.RepeatedScalarFieldContainer[str]
    sentence: int
    type: str
    category: str
    message: str
    confidence: float
    def __init__(self, id: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ..., original: _Optional[str] = ..., replacement: _Optional[str] = ..., alternatives: _Optional[_Iterable[str]] = ..., sentence: _Optional[int] = ..., type: _Optional[str] = ..., category: _Optional[str] = ..., message: _Optional[str] = ..., confidence: _Optional[float] = ...) -> None: ...

class ModelInfo(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class Timings(_message.Message):
    __slots__ = ("queue", "preprocess", "inference", "total", "cache", "postprocess", "review")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PREPROCESS_FIELD_NUMBER: _ClassVar[int]
    INFERENCE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    CACHE_FIELD_NUMBER: _ClassVar[int]
    POSTPROCESS_FIELD_NUMBER: _ClassVar[int]
    REVIEW_FIELD_NUMBER: _ClassVar[int]
    queue: float
    preprocess: float
    inference: float
    total: float
    cache: float
    postprocess: float
    review: float
    def __init__(self, queue: _Optional[float] = ..., preprocess: _Optional[float] = ..., inference: _Optional[float] = ..., total: _Optional[float] = ..., cache: _Optional[float] = ..., postprocess: _Optional[float] = ..., review: _Optional[float] = ...) -> None: ...

class Correction(_message.Message):
    __slots__ = ("text", "edits")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EDITS_FIELD_NUMBER: _ClassVar[int]
    text: str
    edits: _containers.RepeatedCompositeFieldContainer[Edit]
    def __init__(self, text: _Optional[str] = ..., edits: _Optional[_Iterable[_Union[Edit, _Mapping]]] = ...) -> None: ...

class CorrectResponse(_message.Message):
    __slots__ = ("text", "edits", "results", "model", "backend", "timings_ms", "arm", "experiment")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EDITS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    ARM_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENT_FIELD_NUMBER: _ClassVar[int]
    text: str
    edits: _containers.RepeatedCompositeFieldContainer[Edit]
    results: _containers.RepeatedCompositeFieldContainer[Correction]
    model: ModelInfo
    backend: str
    timings_ms: Timings
    arm: str
    experiment: str
    def __init__(self, text: _Optional[str] = ..., edits: _Optional[_Iterable[_Union[Edit, _Mapping]]] = ..., results: _Optional[_Iterable[_Union[Correction, _Mapping]]] = ..., model: _Optional[_Union[ModelInfo, _Mapping]] = ..., backend: _Optional[str] = ..., timings_ms: _Optional[_Union[Timings, _Mapping]] = ..., arm: _Optional[str] = ..., experiment: _Optional[str] = ...) -> None: ...

class GenerateRequest(_message.Message):
    __slots__ = ("text", "num_return_sequences", "strategy", "num_beams", "temperature", "top_k", "top_p", "seed", "max_new_tokens", "model", "num_beam_groups", "diversity_penalty")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    NUM_RETURN_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    NUM_BEAMS_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    MAX_NEW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NUM_BEAM_GROUPS_FIELD_NUMBER: _ClassVar[int]
    DIVERSITY_PENALTY_FIELD_NUMBER: _ClassVar[int]
    text: str
    num_return_sequences: int
    strategy: str
    num_beams: int
    temperature: float
    top_k: int
    top_p: float
    seed: int
    max_new_tokens: int
    model: str
    num_beam_groups: int
    diversity_penalty: float
    def __init__(self, text: _Optional[str] = ..., num_return_sequences: _Optional[int] = ..., strategy: _Optional[str] = ..., num_beams: _Optional[int] = ..., temperature: _Optional[float] = ..., top_k: _Optional[int] = ..., top_p: _Optional[float] = ..., seed: _Optional[int] = ..., max_new_tokens: _Optional[int] = ..., model: _Optional[str] = ..., num_beam_groups: _Optional[int] = ..., diversity_penalty: _Optional[float] = ...) -> None: ...

class GeneratedSequence(_message.Message):
    __slots__ = ("text", "score")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    text: str
    score: float
    def __init__(self, text: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class GenerateResponse(_message.Message):
    __slots__ = ("sequences", "model", "timings_ms")
    SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    sequences: _containers.RepeatedCompositeFieldContainer[GeneratedSequence]
    model: ModelInfo
    timings_ms: Timings
    def __init__(self, sequences: _Optional[_Iterable[_Union[GeneratedSequence, _Mapping]]] = ..., model: _Optional[_Union[ModelInfo, _Mapping]] = ..., timings_ms: _Optional[_Union[Timings, _Mapping]] = ...) -> None: ...

class FeedbackRequest(_message.Message):
    __slots__ = ("edit_ids", "action")
    EDIT_IDS_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    edit_ids: _containers.RepeatedScalarFieldContainer[str]
    action: str
    def __init__(self, edit_ids: _Optional[_Iterable[str]] = ..., action: _Optional[str] = ...) -> None: ...

class FeedbackResponse(_message.Message):
    __slots__ = ("counted", "repeated")
    COUNTED_FIELD_NUMBER: _ClassVar[int]
    REPEATED_FIELD_NUMBER: _ClassVar[int]
    counted: int
    repeated: int
    def __init__(self, counted: _Optional[int] = ..., repeated: _Optional[int] = ...) -> None: ...
