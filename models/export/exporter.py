"""``gecserve export``: a Hugging Face encoder-decoder checkpoint -> a verified model folder.

Families: BART, mBART, Marian and T5 (what differs between them: ``models/export/families.py``).

    gecserve export --from CHECKPOINT_DIR --out models/NAME [--fp16]
        [--quantize int8 [--method static] [--calibration FILE]]

Writes ``encoder.onnx``, ``decoder.onnx``, ``tokenizer.json`` and ``manifest.json`` (with ``--fp16``
``encoder.fp16.onnx``/``decoder.fp16.onnx`` for a GPU, ``models/export/half.py``; with ``--quantize``
``encoder.int8.onnx``/``decoder.int8.onnx``), every graph made lean (``models/export/lean.py``).
Before reporting success it checks the ONNX logits against PyTorch and the engine's greedy
outputs against ``transformers``; a mismatch fails the command (exit status 1). The fp16 and
int8 variants are checked the same way and their greedy agreement with PyTorch is reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForSeq2SeqLM

from models.export.calibration import record_feeds
from models.export.families import architecture, default_decoder_start, max_positions, unsupported
from models.export.graphs import export_graphs
from models.export.half import add_half_variant
from models.export.lean import make_graph_lean
from models.export.quantize import METHODS, method_for, quantize_int8
from models.export.verify import check_logits, greedy_agreement
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest, file_sha256

SAMPLE_SENTENCES = [
    "She go to school every days.",
    "I have a apple and two banana.",
    "Yesterday we have visited the museum in London.",
    "He don't know nothing about it.",
    "This is a perfectly fine sentence.",
    "Their going to there house tomorow.",
    "The informations are very usefull for me.",
    "I am agree with you about this problem.",
    "Can you help me, please?",
    "It was raining, so we stayed at home and watched films.",
    "My freind and me went to the cinema last weekend.",
    "People is very friendly in my country.",
]
LOGITS_TOLERANCE = 1e-3


class ExportError(RuntimeError):
    """The exported model does not match the checkpoint."""


def _tokenizer_file(checkpoint: Path, out: Path) -> Tokenizer:
    """Copy (or convert) the checkpoint's tokenizer into ``out/tokenizer.json``."""
    if (checkpoint / "tokenizer.json").exists():
        shutil.copy(checkpoint / "tokenizer.json", out / "tokenizer.json")
    else:
        from transformers import AutoTokenizer

        hf = AutoTokenizer.from_pretrained(str(checkpoint))
        backend = getattr(hf, "backend_tokenizer", None)
        if backend is None:
            raise ExportError("the checkpoint has no tokenizer.json and its tokenizer has no fast version")
        backend.save(str(out / "tokenizer.json"))
    return Tokenizer.from_file(str(out / "tokenizer.json"))


def _source_template(tokenizer: Tokenizer) -> tuple[list[int], list[int]]:
    """Special ids the tokenizer's post-processor puts before and after a source."""
    plain = tokenizer.encode("a", add_special_tokens=False).ids
    full = tokenizer.encode("a", add_special_tokens=True).ids
    start = next(i for i in range(len(full)) if full[i : i + len(plain)] == plain)
    return full[:start], full[start + len(plain) :]


def build_manifest(model: torch.nn.Module, tokenizer: Tokenizer, name: str, version: str) -> ModelManifest:
    cfg, gen = model.config, model.generation_config
    prefix, suffix = _source_template(tokenizer)
    starts = (gen.decoder_start_token_id, getattr(cfg, "decoder_start_token_id", None), default_decoder_start(cfg))
    start = next((token for token in starts if token is not None), None)
    if start is None:
        raise ExportError("the checkpoint names no decoder start token")
    forced = (
        gen.forced_bos_token_id if gen.forced_bos_token_id is not None else getattr(cfg, "forced_bos_token_id", None)
    )
    eos = gen.eos_token_id if gen.eos_token_id is not None else cfg.eos_token_id
    eos = eos[0] if isinstance(eos, list) else eos
    if not suffix:
        suffix = [eos]  # seq2seq encoders are trained on sources that end with </s>
    positions = max_positions(cfg)
    return ModelManifest(
        name=name,
        version=version,
        family=cfg.model_type,
        architecture={**architecture(cfg), "parameters": sum(p.numel() for p in model.parameters())},
        pad_token_id=int(cfg.pad_token_id),
        eos_token_id=int(eos),
        decoder_prefix_ids=[int(start)] + ([int(forced)] if forced is not None else []),
        source_prefix_ids=prefix,
        source_suffix_ids=suffix,
        max_source_positions=positions,
        max_target_positions=positions,
        variants={"fp32": {"encoder": "encoder.onnx", "decoder": "decoder.onnx"}},
    )


def _verify(model: torch.nn.Module, out: Path, variant: str, sources: list[list[int]]) -> dict:
    engine = Engine(out, variant=variant)
    targets = [s[: max(1, len(s) - 1)] for s in sources]
    logits = check_logits(model, engine, sources, targets)
    same, total, differ = greedy_agreement(model, engine, sources)
    return {
        "logits_max_abs_diff": logits.worst,
        "greedy_identical": same,
        "greedy_total": total,
        "greedy_agreement": round(same / total, 4),
        "greedy_differ": differ,
    }


def export(
    checkpoint: Path,
    out: Path,
    name: str | None = None,
    version: str = "1",
    quantize: str | None = None,
    method: str = "static",
    samples: list[str] | None = None,
    keep_fp32: bool = True,
    extra: dict | None = None,
    calibration: list[str] | None = None,
    half: bool = False,
) -> ModelManifest:
    """Export, verify and describe ``checkpoint`` in ``out``; raises ``ExportError`` on a mismatch.

    ``calibration``: sentences the ``static`` int8 method fixes its activation scales on (default:
    the verification samples; a few hundred sentences like the service's traffic do better).
    """
    model = AutoModelForSeq2SeqLM.from_pretrained(str(checkpoint), attn_implementation="eager").float().eval()
    reason = unsupported(model.config)
    if reason is not None:
        raise ExportError(reason)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        work = Path(tmp)
        tokenizer = _tokenizer_file(checkpoint, work)
        manifest = build_manifest(model, tokenizer, name or out.name, version)
        manifest.save(work)
        print("exporting ONNX graphs ...", file=sys.stderr)
        export_graphs(model, work)
        for part in ("encoder", "decoder"):
            make_graph_lean(work / f"{part}.onnx", lambda line, p=part: print(f"lean {p}: {line}", file=sys.stderr))
        texts = samples or SAMPLE_SENTENCES
        sources = [
            ids[: manifest.max_source_content]
            for ids in (e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False))
        ]
        report = _verify(model, work, "fp32", sources)
        print(
            f"fp32: logits max |ORT - PyTorch| = {report['logits_max_abs_diff']:.2e}; greedy identical "
            f"to transformers generate: {report['greedy_identical']}/{report['greedy_total']}",
            file=sys.stderr,
        )
        if report["logits_max_abs_diff"] > LOGITS_TOLERANCE or report["greedy_differ"]:
            raise ExportError(f"fp32 export does not match the checkpoint: {report}")
        manifest.verification = {"fp32": report}
        if half:
            manifest.save(work)
            manifest = add_half_variant(work)
            report16 = _verify(model, work, "fp16", sources)
            print(
                f"fp16: logits max |ORT - PyTorch| = {report16['logits_max_abs_diff']:.3f}; greedy agreement with "
                f"PyTorch: {report16['greedy_agreement']:.1%}",
                file=sys.stderr,
            )
            manifest.verification["fp16"] = report16
        if quantize == "int8":
            feeds = {}
            if "static" in (method_for("encoder", method), method_for("decoder", method)):
                calibration = calibration or texts
                print(f"calibrating static int8 on {len(calibration)} sentences ...", file=sys.stderr)
                feeds = record_feeds(work, calibration)
            for part in ("encoder", "decoder"):
                quantize_int8(
                    work / f"{part}.onnx", work / f"{part}.int8.onnx", method_for(part, method), feeds.get(part)
                )
                make_graph_lean(work / f"{part}.int8.onnx")
            manifest.variants["int8"] = {"encoder": "encoder.int8.onnx", "decoder": "decoder.int8.onnx"}
            manifest.default_variant = "int8"
            manifest.save(work)
            report8 = _verify(model, work, "int8", sources)
            report8["method"] = method
            if feeds:
                report8["calibration_sentences"] = len(calibration)
            print(
                f"int8 ({method}): logits max |ORT - PyTorch| = {report8['logits_max_abs_diff']:.3f}; greedy "
                f"agreement with PyTorch: {report8['greedy_agreement']:.1%}",
                file=sys.stderr,
            )
            manifest.verification["int8"] = report8
            if not keep_fp32:
                del manifest.variants["fp32"]
                for part in ("encoder", "decoder"):
                    (work / f"{part}.onnx").unlink()
        manifest.extra.update(extra or {})
        manifest.files_sha256 = {
            p.name: file_sha256(p) for p in sorted(work.iterdir()) if p.is_file() and p.name != "manifest.json"
        }
        manifest.save(work)
        for path in work.iterdir():
            shutil.move(str(path), out / path.name)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve export", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--from", dest="checkpoint", type=Path, required=True, help="Hugging Face checkpoint dir")
    parser.add_argument("--out", type=Path, required=True, help="model folder to write (models/<name>)")
    parser.add_argument("--name", default=None)
    parser.add_argument("--version", default="1")
    parser.add_argument("--quantize", choices=["int8"], default=None)
    parser.add_argument("--method", choices=METHODS, default="static", help="int8 method")
    parser.add_argument("--no-fp32", action="store_true", help="keep only the int8 variant")
    parser.add_argument("--fp16", action="store_true", help="also the fp16 variant (models/export/half.py): for a GPU")
    parser.add_argument("--samples", type=Path, help="file of sentences to verify on (default: built-in)")
    parser.add_argument(
        "--calibration", type=Path, help="file of sentences to calibrate static int8 on (default: the samples)"
    )
    args = parser.parse_args(argv)
    samples = args.samples.read_text(encoding="utf-8").splitlines() if args.samples else None
    calibration = args.calibration.read_text(encoding="utf-8").splitlines() if args.calibration else None
    try:
        manifest = export(
            args.checkpoint,
            args.out,
            args.name,
            args.version,
            args.quantize,
            args.method,
            samples,
            keep_fp32=not args.no_fp32,
            calibration=calibration,
            half=args.fp16,
        )
    except ExportError as error:
        print(f"export failed: {error}", file=sys.stderr)
        return 1
    print(json.dumps(manifest.verification, indent=2))
    return 0
