"""Turn a finished recipe run into a shipped model folder (``models/gec-default``, ``models/gec-v3``).

    python -m models.gec.package --run runs/gec-v3 --out models/gec-v3 --version 3 --data ../shared/data

Exports the trained checkpoint with the real exporter (int8 only: no fp32 copy is shipped; the
``static`` method calibrated on learner sentences of the training sources, never dev), builds
the spelling stage's vocabulary and ranking and the language model that reviews corrections beside it
(``models.gec.vocabulary``, ``models.gec.spelling_model``, ``models.gec.language_model``), measures the
keep bias across its range on JFLEG dev and FCE dev and names the model's levels from it
(``keep_bias_levels``), evaluates it on both (the served path, and the model alone), and records in
``manifest.json`` the architecture, tokenizer, training data with its licence terms, training
configuration, hardware and duration, and the dev-set figures as packaged (``packaging_quality``: every edit kept,
for no confidence fit exists yet). What the model is served with comes after: its confidence fit and the figures as
served at each level (``quality``, which ``GET /v1/models`` lists), both written by ``models.gec.calibrate``.

    python -m models.gec.package --checkpoint CHECKPOINT_DIR --out models/gec-default --data ../shared/data

re-exports the shipped model's own weights (``CHECKPOINT_DIR`` from ``models.gec.unpack``) with
another int8 method, keeping the manifest's training record: for when the run is gone.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer
from tokenizers.processors import TemplateProcessing

from models.export.exporter import export
from models.gec.average import average_snapshots
from models.gec.language_model import ship_language_model
from models.gec.spelling_model import ship_spelling_model
from models.gec.tokenizer import EOS_ID
from models.gec.vocabulary import ship_vocabulary
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest
from service.engine.offline import model_review, model_speller
from service.engine.report import machine
from service.engine.runtime import RuntimeOptions
from service.text.lm_review import LanguageModelReview
from service.text.spelling import Speller

LICENCE_NOTE = (
    "NON-COMMERCIAL RESEARCH USE ONLY. The model is trained on learner corpora whose licences "
    "allow non-commercial research and education only (W&I+LOCNESS, FCE: 'any use ... for or as part "
    "of a product or service which is sold, offered for sale, licensed, leased or rented' is excluded; "
    "NUCLE: NUS licence, research use; Lang-8: research use) and on monolingual text of which several "
    "sources are non-commercial or research-only (OpenStax NC-SA books, BBC, ABC, AG News, Reuters-21578, "
    "Brown). The gecserve code is separate from these terms; the model weights are not."
)

TRAINING_DATA = [
    {
        "name": "W&I+LOCNESS v2.1 train (BEA-2019)",
        "pairs": "34,308",
        "licence": "non-commercial research and education only (Cambridge CEWI licence)",
    },
    {
        "name": "FCE v2.1 train",
        "pairs": "28,596",
        "licence": "non-commercial research and education only (CLC FCE licence)",
    },
    {"name": "NUCLE 3.2", "pairs": "21,641", "licence": "NUS licence (not included); treat as research only"},
    {"name": "Lang-8 (NAIST) excerpt", "pairs": "8,171", "licence": "research use"},
    {
        "name": "synthetic errors on 1.35M-sentence monolingual pool (17 sources)",
        "pairs": "see data.synthetic_pairs",
        "licence": (
            "mixed: public domain, CC BY, CC BY-SA (Wikipedia), CC BY-NC-SA (OpenStax), "
            "research-only news (BBC, ABC, Reuters, AG News), Brown non-commercial"
        ),
    },
]


def _with_source_template(tokenizer_path: Path, out: Path) -> Path:
    """The run's tokenizer plus the source template the model was trained with (``$A </s>``)."""
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.post_processor = TemplateProcessing(single="$A </s>", special_tokens=[("</s>", EOS_ID)])
    tokenizer.save(str(out))
    return out


def _recipe(run: Path) -> dict[str, Any] | str:
    """The recipe command and schedule of the run (written by ``models.gec.recipe``)."""
    path = run / "recipe.json"
    if path.exists():
        return json.loads(path.read_text())
    return "python -m models.gec.recipe --data ../shared/data --run runs/gec-default --device cpu"


KEEP_BIAS_GRID = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 0.75, 1.0)
MIN_KEPT = 0.95  # the default level keeps at least this share of FCE dev's sentences that need no edit unchanged
FIGURES = ("sentences", "gleu", "gleu_std", "exact_match", "unchanged_kept", "needs_no_change", "changed")


def _dev_sets(model_dir: Path, data: Path) -> Callable[..., dict[str, Any]]:
    """A function of (speller, keep bias, review) giving JFLEG dev's and FCE dev's figures for the model."""
    from models.gec.evaluate import evaluate

    engine = Engine(model_dir, options=RuntimeOptions(intra_op_threads=2))
    dev = data / "dev"
    read = lambda p: p.read_text(encoding="utf-8").rstrip("\n").split("\n")  # noqa: E731
    jfleg_src, jfleg_refs = read(dev / "jfleg.dev.src"), [read(dev / f"jfleg.dev.ref{i}") for i in range(4)]
    fce_src, fce_refs = read(dev / "fce.dev.detok.src"), [read(dev / "fce.dev.detok.tgt")]

    def sets(speller: Speller | None, keep_bias: float | None, review: LanguageModelReview | None) -> dict[str, Any]:
        options = {"speller": speller, "keep_bias": keep_bias, "review": review}
        jfleg = evaluate(engine, jfleg_src, jfleg_refs, True, **options)
        fce = evaluate(engine, fce_src, fce_refs, False, **options)
        return {"jfleg_dev": {k: jfleg[k] for k in FIGURES}, "fce_dev": {k: fce[k] for k in FIGURES}}

    return sets


def keep_bias_levels(
    curve: Sequence[dict[str, Any]], min_kept: float = MIN_KEPT, default_bias: float | None = None
) -> dict[str, float]:
    """The model's levels from its figures across the keep bias (rows of ``keep_bias``, ``jfleg_dev``,
    ``fce_dev``): ``default`` is the bias with the best mean GLEU of the two sets among those that keep
    ``min_kept`` of FCE dev's sentences needing no edit unchanged (the highest bias if none does), or
    ``default_bias`` where given (chosen with the confidence threshold, which this curve, every edit kept, does not
    see: ``models.gec.frontier``); ``picky``, the recall end, the bias below it with the best JFLEG dev GLEU (the
    default if none is below it)."""
    kept = [row for row in curve if row["fce_dev"]["unchanged_kept"] >= min_kept]
    mean = lambda row: (row["jfleg_dev"]["gleu"] + row["fce_dev"]["gleu"]) / 2  # noqa: E731
    default = max(kept, key=mean) if kept else max(curve, key=lambda row: row["keep_bias"])
    if default_bias is not None:
        default = next(row for row in curve if row["keep_bias"] == default_bias)
    below = [row for row in curve if row["keep_bias"] < default["keep_bias"]]
    picky = max(below, key=lambda row: row["jfleg_dev"]["gleu"]) if below else default
    return {"default": default["keep_bias"], "picky": picky["keep_bias"]}


def _served_figures(model_dir: Path, data: Path) -> dict[str, Any]:
    """A shipped model's dev figures as it is served (its spelling stage, review and default keep bias: None)."""
    return _dev_sets(model_dir, data)(model_speller(model_dir), None, model_review(model_dir))


def _dev_figures(
    model_dir: Path, data: Path, replaces: Path | None = None, default_bias: float | None = None
) -> dict[str, Any]:
    """The keep bias measured across ``KEEP_BIAS_GRID`` (served path), the levels named in the manifest from it,
    the served path's figures at the default level, and the model's alone (no spelling stage, no review, no
    bias) under ``model_alone``. A model that ``replaces`` another keeps at least as many of FCE dev's correct
    sentences as written as that one does as served (its figures under ``replaces``)."""
    sets = _dev_sets(model_dir, data)
    speller, review = model_speller(model_dir), model_review(model_dir)
    grid = sorted({*KEEP_BIAS_GRID, *([default_bias] if default_bias is not None else [])})
    curve = [{"keep_bias": bias, **sets(speller, bias, review)} for bias in grid]
    before = _served_figures(replaces, data) if replaces is not None else None
    min_kept = max(MIN_KEPT, before["fce_dev"]["unchanged_kept"]) if before else MIN_KEPT
    manifest = ModelManifest.load(model_dir)
    manifest.keep_bias = keep_bias_levels(curve, min_kept, default_bias)
    manifest.save(model_dir)
    served = next(row for row in curve if row["keep_bias"] == manifest.keep_bias["default"])
    return {
        **{key: value for key, value in served.items() if key != "keep_bias"},
        "keep_bias": manifest.keep_bias,
        "keep_bias_curve": curve,
        "model_alone": sets(None, 0.0, None),
        **({"replaces": {"model": f"version {ModelManifest.load(replaces).version}", **before}} if before else {}),
        "decoding": "aggressive (identical to greedy), with the default keep bias; the language model's review",
    }


CALIBRATION_SOURCES = ("wi_locness", "fce", "nucle", "lang8")


def calibration_sentences(data: Path, count: int = 400, seed: int = 0) -> list[str]:
    """Learner sentences (training sources, never dev) for the static int8 scales, evenly per corpus."""
    rng = random.Random(seed)
    picked: list[str] = []
    for corpus in CALIBRATION_SOURCES:
        lines = (data / "train" / f"{corpus}.train.detok.src").read_text(encoding="utf-8").splitlines()
        lines = [line for line in lines if 3 <= len(line.split()) <= 50]
        picked += rng.sample(lines, count // len(CALIBRATION_SOURCES))
    return picked


def package(
    run: Path,
    out: Path,
    data: Path | None,
    method: str = "static",
    version: str = "1",
    continues: Path | None = None,
    average: int = 0,
    default_bias: float | None = None,
) -> ModelManifest:
    """Ship ``run``'s final weights (or the average of stage 2's last ``average`` snapshots) as ``version``; a run
    that continued the model folder ``continues`` (``recipe --init``) records that model's training too;
    ``default_bias``: the default level's keep bias, else chosen on the dev sets (``keep_bias_levels``)."""
    data_info = json.loads((run / "data.json").read_text())
    stage_data = data_info.get(  # a lease's run (models.gec.lease) says what its stages read
        "stage_data", {"stage1": "synthetic + learner pairs (learner x2)", "stage2": "learner pairs only"}
    )
    summaries = {  # stage 1 has no folder in a run that fine-tuned a model (recipe --schedule cpu-finetune)
        stage: json.loads((run / stage / "summary.json").read_text())
        for stage in stage_data
        if (run / stage / "summary.json").exists()
    }
    summary2 = summaries["stage2"]
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = Path(tmp) / "hf"
        shutil.copytree(run / "stage2" / "model", checkpoint)
        if average:
            averaged = average_snapshots(run / "stage2", average, checkpoint)
            summary2["averaged_snapshots"] = [path.stem for path in averaged]
        _with_source_template(run / "tokenizer.json", checkpoint / "tokenizer.json")
        training: dict[str, Any] = {
            "recipe": _recipe(run),
            **{stage: {"data": stage_data[stage], **summary} for stage, summary in summaries.items()},
            "data": data_info,
            "hardware": {"device": summary2["device"], **machine()},  # where this packaging ran too
            "hours": round(sum(summary["minutes"] for summary in summaries.values()) / 60, 2),
        }
        if continues is not None:
            before = ModelManifest.load(continues)
            earlier = before.extra.get("training", {})
            training["continued_from"] = {"model": f"{before.name} version {before.version}", "training": earlier}
            training["hours"] = round(training["hours"] + earlier.get("hours", 0.0), 2)
        record = {
            "licence": LICENCE_NOTE,
            "training_data": TRAINING_DATA,
            "training": training,
            "tokenizer_info": {"type": "byte-level BPE (HF tokenizers)", "vocab_size": data_info["vocab_size"]},
        }
        return _ship(checkpoint, out, data, method, "gec-default", version, record, continues, default_bias)


def _ship(
    checkpoint: Path,
    out: Path,
    data: Path | None,
    method: str,
    name: str,
    version: str,
    record: dict[str, Any],
    replaces: Path | None = None,
    default_bias: float | None = None,
) -> ModelManifest:
    """Export int8 only (calibrated on training sentences when ``data`` is given), then add the dev figures."""
    manifest = export(
        checkpoint,
        out,
        name=name,
        version=version,
        quantize="int8",
        method=method,
        keep_fp32=False,
        calibration=calibration_sentences(data) if data is not None else None,
        extra=record,
    )
    if data is not None:
        ship_vocabulary(out, data)
        ship_spelling_model(out, data)
        ship_language_model(out, data)
        quality = _dev_figures(out, data, replaces, default_bias)
        manifest = ModelManifest.load(out)
        manifest.extra["packaging_quality"] = quality
        manifest.save(out)
    return manifest


RECORD_KEYS = ("licence", "training_data", "training", "tokenizer_info")


def repackage(checkpoint: Path, out: Path, data: Path | None, method: str = "static") -> ModelManifest:
    """Re-export the weights of the model in ``out`` (unpacked to ``checkpoint``) with ``method``;
    the training record stays, verification and dev figures are measured again."""
    previous = ModelManifest.load(out)
    record = {key: previous.extra[key] for key in RECORD_KEYS if key in previous.extra}
    record["repackaged"] = {
        "from": f"version {previous.version}'s int8 weights, unpacked by models.gec.unpack",
        "previous_method": previous.verification.get("int8", {}).get("method"),
        "hardware": machine(),
    }
    version = str(int(previous.version) + 1) if previous.version.isdigit() else previous.version + "+1"
    return _ship(checkpoint, out, data, method, previous.name, version, record)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", type=Path, help="a finished recipe run")
    source.add_argument("--checkpoint", type=Path, help="the shipped model's weights (models.gec.unpack)")
    parser.add_argument("--out", type=Path, default=Path("models/gec-default"))
    parser.add_argument("--data", type=Path, default=None, help="data dir: calibration and dev-set figures")
    parser.add_argument("--method", default="static")
    parser.add_argument("--version", default="1", help="with --run: the version the manifest names")
    parser.add_argument(
        "--continues",
        type=Path,
        default=None,
        help="with --run: the model folder it continued and replaces (the default level keeps its correct sentences)",
    )
    parser.add_argument("--average", type=int, default=0, help="with --run: average stage 2's last N snapshots")
    parser.add_argument("--keep-bias", type=float, default=None, help="with --run: the default level's keep bias")
    args = parser.parse_args(argv)
    if args.run is not None:
        manifest = package(
            args.run, args.out, args.data, args.method, args.version, args.continues, args.average, args.keep_bias
        )
    else:
        manifest = repackage(args.checkpoint, args.out, args.data, args.method)
    print(json.dumps(manifest.extra.get("packaging_quality", {}), indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
