"""The ``fp16`` variant of a model folder: its fp32 graphs in half precision (``gecserve export --fp16``).

    python -m models.export.half MODEL_DIR    # a folder that has the fp32 variant

ONNX Runtime's ``float16`` converter with ``keep_io_types``: the weights and arithmetic are fp16,
the inputs and outputs stay float32 (a ``Cast`` at each), so the engine feeds and reads the variant
as it does ``fp32``. For a GPU; on the shipped model (9M parameters) it measured slower than fp32
there, its per-pass casts of the cache costing more than the halved weights save (docs/benchmarks.md, On a GPU).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx
from onnxruntime.transformers.float16 import convert_float_to_float16

from service.engine.manifest import ModelManifest, file_sha256

HALF_FILES = {"encoder": "encoder.fp16.onnx", "decoder": "decoder.fp16.onnx"}


def add_half_variant(model_dir: Path) -> ModelManifest:
    """Write the ``fp16`` graphs beside ``model_dir``'s fp32 ones and name them in its manifest; returns it saved."""
    manifest = ModelManifest.load(model_dir)
    fp32 = manifest.variants.get("fp32")
    if fp32 is None:
        raise ValueError(f"{model_dir} has no fp32 variant to convert")
    for part, file in HALF_FILES.items():
        graph = convert_float_to_float16(onnx.load(str(model_dir / fp32[part])), keep_io_types=True)
        onnx.save(graph, str(model_dir / file))
    manifest.variants["fp16"] = dict(HALF_FILES)
    digests = {file: file_sha256(model_dir / file) for file in HALF_FILES.values()}
    manifest.files_sha256 = dict(sorted({**manifest.files_sha256, **digests}.items()))
    manifest.save(model_dir)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="model folder with an fp32 variant")
    args = parser.parse_args(argv)
    try:
        manifest = add_half_variant(args.model)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{args.model}: variants {', '.join(sorted(manifest.variants))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
