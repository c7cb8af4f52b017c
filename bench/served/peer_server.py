"""The peer of ``gecserve bench serve --peer-ct2``: the correction server a team would write in an afternoon.

    python -m bench.served.peer_server --checkpoint runs/gec-default-hf --port 8001

FastAPI + uvicorn. Bling Fire splits the text into sentences, the checkpoint's own ``tokenizer.json`` (the
``tokenizers`` library, special tokens in the text read as text, as the service reads them) turns them into ids, and
one CTranslate2 translator (int8, greedy, one intra-op thread: ``bench.engine.peer_ct2.CT2Greedy``, which converts
the checkpoint at start-up) decodes the sentences of one request as one batch. ``POST /v1/correct`` takes
``{"text": ...}`` and answers ``{"text": corrected}``, the corrected sentences joined by single spaces: no edits or
offsets, no spelling stage, review or keep bias, no cache, no batching across requests (the service does all of
these). ``GET /healthz`` answers once the model is loaded: the server listens only then.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import blingfire
import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
from tokenizers import Tokenizer

from bench.engine.peer_ct2 import CT2Greedy

MAX_SOURCE_TOKENS = 255  # the model's 256 positions, less the end-of-sentence token


class CorrectRequest(BaseModel):
    text: str


class CorrectResponse(BaseModel):
    text: str


class Corrector:
    """Sentence splitting, tokenization and CTranslate2 greedy decoding of one Hugging Face checkpoint."""

    def __init__(self, checkpoint: Path) -> None:
        self.tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
        self.tokenizer.encode_special_tokens = True
        self.model = CT2Greedy(checkpoint, threads=1, quantization="int8")

    def correct(self, text: str) -> str:
        sentences = [s for s in blingfire.text_to_sentences(text).split("\n") if s.strip()]
        if not sentences:
            return text
        encoded = self.tokenizer.encode_batch(sentences, add_special_tokens=False)
        outputs = self.model.generate([e.ids[:MAX_SOURCE_TOKENS] for e in encoded])
        return " ".join(self.tokenizer.decode_batch(outputs, skip_special_tokens=True))


def create_app(corrector: Corrector) -> FastAPI:
    app = FastAPI(title="fastapi+ct2 peer")

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/correct")
    def correct(request: CorrectRequest) -> CorrectResponse:  # a plain def: FastAPI runs it on its thread pool
        return CorrectResponse(text=corrector.correct(request.text))

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.served.peer_server", description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True, help="Hugging Face checkpoint folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    app = create_app(Corrector(args.checkpoint))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
