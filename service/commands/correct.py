"""``gecserve correct``: natural text in on stdin, corrected text out, one paragraph per line.

    gecserve correct --model models/gec-default [--decoding aggressive|greedy|beam] [--batch-size N]
                     [--no-spelling] [--level safe|default|picky] [--min-confidence C]
                     [--language en-US|en-GB|en-CA|en-AU] < in > out

Paragraphs are read exactly as the service reads them (protected spans, sentences, languages, the
spelling stage where the model ships a vocabulary, the guard, the edits held back for their confidence at the
level, an English dialect's spelling variants with ``--language``); lines keep their order. The correction itself is
``service.engine.offline.correct_texts``; this module is its command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from service.config import DEFAULT_MODEL
from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_review, model_speller
from service.engine.offline_options import add_confidence_options, add_language_option, confidence_of
from service.engine.runtime import RuntimeOptions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve correct", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--decoding", default="aggressive", choices=["aggressive", "greedy", "beam"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--variant", default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-spelling", action="store_true", help="without the spelling stage")
    parser.add_argument("--no-lm-review", action="store_true", help="without the language model's review")
    parser.add_argument(
        "--keep-bias",
        type=float,
        default=None,
        help="the keep bias (default: the model's, as served; greedy, aggressive)",
    )
    add_confidence_options(parser)
    add_language_option(parser)
    args = parser.parse_args(argv)
    speller = None if args.no_spelling else model_speller(args.model)
    review = None if args.no_lm_review else model_review(args.model)
    engine = Engine(args.model, variant=args.variant, options=RuntimeOptions(intra_op_threads=args.threads))
    lines = sys.stdin.read().split("\n")
    trailing = lines and lines[-1] == ""
    if trailing:
        lines = lines[:-1]
    corrected = correct_texts(
        engine,
        lines,
        args.decoding,
        args.batch_size,
        progress=sys.stderr.isatty(),
        speller=speller,
        keep_bias=args.keep_bias,
        review=review,
        confidence=confidence_of(args, args.model),
        level=args.level,
        min_confidence=args.min_confidence,
        language=args.language,
    )
    sys.stdout.write("\n".join(c.text for c in corrected) + ("\n" if trailing else ""))
    return 0
