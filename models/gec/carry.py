"""Carry a shipped model's serving files into another export of the same weights.

    python -m models.gec.carry --from models/gec-default --to /out/gec-default-fp32

The GPU image exports fp32 graphs from the shipped int8 model's weights (``models.gec.unpack``, then
``gecserve export``); this copies what the service reads beside the graphs (the spelling stage's vocabulary and
ranking, the language model that reviews corrections) and the keep-bias levels measured for the model, so that the
fp32 folder is served as the int8 one is. Both folders must name the same model and version.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from service.engine.manifest import ModelManifest, name_file

SERVING_ROLES = ("vocabulary", "spelling_model", "language_model")


def carry(source: Path, target: Path) -> ModelManifest:
    """Copy ``source``'s serving files and keep-bias levels into ``target``; returns ``target``'s saved manifest."""
    shipped, exported = ModelManifest.load(source), ModelManifest.load(target)
    if (shipped.name, shipped.version) != (exported.name, exported.version):
        raise ValueError(
            f"{target} is {exported.name} version {exported.version}, {source} is {shipped.name} version "
            f"{shipped.version}: carry only between exports of the same model version"
        )
    for role in SERVING_ROLES:
        file = getattr(shipped, role)
        if file is not None:
            shutil.copy(source / file, target / file)
            name_file(target, role, file, shipped.extra.get(f"{role}_info", {}))
    manifest = ModelManifest.load(target)
    manifest.keep_bias = dict(shipped.keep_bias)
    manifest.save(target)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", type=Path, required=True, help="the shipped model folder")
    parser.add_argument("--to", dest="target", type=Path, required=True, help="another export of its weights")
    args = parser.parse_args(argv)
    try:
        manifest = carry(args.source, args.target)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    carried = [getattr(manifest, role) for role in SERVING_ROLES if getattr(manifest, role)]
    print(f"{args.target}: {', '.join(carried) or 'no serving files'}; keep bias {manifest.keep_bias}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
