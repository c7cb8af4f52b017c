"""GEC evaluation metrics: JFLEG GLEU, JFLEG-style (de)tokenisation, change statistics."""

from models.gec.metrics.gleu import GleuResult, corpus_gleu, gleu_from_stats, gleu_stats
from models.gec.metrics.report import ChangeStats, change_stats
from models.gec.metrics.textnorm import detokenize, tokenize

__all__ = [
    "ChangeStats",
    "GleuResult",
    "change_stats",
    "corpus_gleu",
    "detokenize",
    "gleu_from_stats",
    "gleu_stats",
    "tokenize",
]
