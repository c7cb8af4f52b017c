"""The command-line options of the offline batch path's commands (``gecserve correct``, ``gecserve eval``) that
choose which edits ``offline.correct_texts`` holds back for their confidence, as the service holds them back for a
request's level, and the English dialect whose spellings it suggests, as a request's ``language``."""

from __future__ import annotations

import argparse
from pathlib import Path

from service.engine.offline import model_confidence
from service.text.confidence import ConfidenceModel
from service.text.dialects import CODES
from service.text.policy import LEVELS


def add_confidence_options(parser: argparse.ArgumentParser) -> None:
    """``--level``, ``--min-confidence`` and ``--no-confidence``."""
    parser.add_argument("--level", default="default", choices=sorted(LEVELS), help="the level, as served")
    parser.add_argument("--min-confidence", type=float, default=None, help="a threshold instead of the level's")
    parser.add_argument(
        "--no-confidence", action="store_true", help="every edit the model makes, none held back for its confidence"
    )


def add_language_option(parser: argparse.ArgumentParser) -> None:
    """``--language``: an English dialect (``service.text.dialects``); unset, both spellings stand."""
    parser.add_argument(
        "--language", default=None, choices=CODES, help="an English dialect: suggest its spelling variants, as served"
    )


def confidence_of(args: argparse.Namespace, model_dir: Path) -> ConfidenceModel | None:
    """The fit that gives the edits their confidence, as served; None with ``--no-confidence``."""
    return None if args.no_confidence else model_confidence(model_dir)
