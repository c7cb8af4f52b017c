"""Where the served models come from: ``GECSERVE_MODEL_PATH`` and ``GECSERVE_MODELS``.

``GECSERVE_MODELS`` lists models as ``name=path`` pairs separated by commas; an entry that is only a path is a
model folder, named by its manifest, or a folder of model folders, each named by its own folder. The default
model, which serves requests that name none, is ``GECSERVE_MODEL_PATH`` when it is set (added under its
manifest's name unless the list names the same folder), else the first listed (with neither: the bundled
model). Names are unique; a name is what requests, experiment arms and ``gecserve worker --model`` use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from service.config import Settings
from service.engine.manifest import ModelManifest
from service.experiments.definition import NAME_PATTERN  # a model's name reads as an experiment's or an arm's

__all__ = ["ModelSource", "model_sources", "parse_models"]


@dataclass(frozen=True)
class ModelSource:
    """A model to serve: its name, and its folder."""

    name: str
    path: Path


def _manifest_name(path: Path) -> str:
    try:
        return ModelManifest.load(path).name
    except (OSError, ValueError, TypeError):
        return path.name  # the folder check says what is wrong with it


def parse_models(spec: str) -> list[ModelSource]:
    """The models of a ``GECSERVE_MODELS`` value, in order (``ValueError`` naming the entry at fault)."""
    sources: list[ModelSource] = []
    for entry in (part.strip() for part in spec.split(",")):
        if not entry:
            continue
        name, separator, path_text = entry.partition("=")
        if separator:
            name, path = name.strip(), Path(path_text.strip())
            if not re.match(NAME_PATTERN, name):
                raise ValueError(f"{entry!r}: a model name is 1-63 letters, digits, '_', '.' or '-'")
            sources.append(ModelSource(name, path))
            continue
        path = Path(entry)
        if path.is_dir() and not (path / "manifest.json").is_file():
            inside = sorted(child for child in path.iterdir() if (child / "manifest.json").is_file())
            if not inside:
                raise ValueError(f"{entry!r}: neither a model folder nor a folder of model folders")
            sources += [ModelSource(child.name, child) for child in inside]
        else:
            sources.append(ModelSource(_manifest_name(path), path))
    names = [source.name for source in sources]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"model names must be unique: {', '.join(twice)} named twice (give each entry a name=)")
    return sources


def model_sources(settings: Settings) -> list[ModelSource]:
    """Every model ``settings`` serve, the default first (see the module docstring)."""
    listed = parse_models(settings.models)
    if listed and "model_path" not in settings.model_fields_set:
        return listed
    resolved = settings.model_path.resolve()
    same = [source for source in listed if source.path.resolve() == resolved]
    default = same[0] if same else ModelSource(_manifest_name(settings.model_path), settings.model_path)
    others = [source for source in listed if source is not default]
    if default.name in {source.name for source in others}:
        raise ValueError(
            f"the default model ({settings.model_path}) and a listed one are both named {default.name!r}: "
            "name the listed one otherwise"
        )
    return [default, *others]
