"""Exported graphs rewritten so that a decoder pass copies and computes nothing it need not.

The exporter's decoder took the self-attention cache and the cross-attention keys/values as one tensor
each (``past_kv``, ``cross_kv``: ``[layers, 2, batch, heads, length, head size]``) and cut them into
layers with ``Gather`` nodes: on the CPU every cut is a copy, so every pass copied the whole cache and
all the encoder's keys/values twice before attending to them (at batch 16, a quarter of a pass:
``gecserve bench profile``). It also computed every ``Reshape`` target at run time from
``Shape``/``Gather``/``Unsqueeze``/``Concat`` chains that ONNX Runtime cannot fold, and added an
all-zero ``final_logits_bias`` to the logits. ``make_lean`` rewrites a graph in three passes, plain
ONNX (any execution provider runs the result, and ONNX Runtime's own fusions still apply), each
keeping every output bit-identical:

1. ``split_kv_inputs``: a ``[layers, 2, ...]`` input cut into layers becomes one input per layer and
   kind, ``{past,cross}_{key,value}_{layer}`` (``[batch, heads, length, head size]``), which the
   engine feeds as views of its own arrays (``service.engine.model``): no copy on either side;
2. ``fold_reshapes``: every computed ``Reshape`` target becomes a constant (``0`` copies a dimension,
   ``-1`` infers one), and the chains that computed them are dropped;
3. ``drop_zero_adds``: adds of an all-zero constant that do not broadcast their other input are dropped.

Passes 1 and 2 find what they rewrite by running the graph at two probe sizes; the result is checked
against the original at a third. ``python -m models.export.lean MODEL_DIR`` rewrites every graph of a
model folder in place (and its manifest's file hashes); ``gecserve export`` makes its graphs lean
before it verifies or quantises them. A graph already lean is left as it is.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from service.engine.manifest import ModelManifest, file_sha256
from service.engine.model import LAYER_INPUTS, layer_input, layer_inputs

Feeds = dict[str, np.ndarray]

# Symbolic sizes far from the model's constants (heads, head size, width, vocabulary) and from each
# other, so that a dimension following one of them is told from a constant; CHECK checks the result.
PROBES: tuple[Mapping[str, int], ...] = (
    {"batch": 3, "new": 5, "past": 7, "source": 11},
    {"batch": 2, "new": 13, "past": 17, "source": 19},
)
CHECK: Mapping[str, int] = {"batch": 5, "new": 3, "past": 9, "source": 23}
_INT_TYPES = {onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


class LeanError(RuntimeError):
    """A rewritten graph does not compute what the original computes."""


def _session(model: onnx.ModelProto, level: ort.GraphOptimizationLevel) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def probe_feeds(model: onnx.ModelProto, sizes: Mapping[str, int], seed: int = 0) -> Feeds:
    """Inputs for ``model`` with its symbolic dimensions set to ``sizes`` (a dimension named by no size takes
    the first size whose name it contains): token ids and positions 2, masks all ones, floats random."""
    random = np.random.default_rng(seed)
    feeds: Feeds = {}
    for value in model.graph.input:
        dims = []
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                dims.append(sizes.get(dim.dim_param) or next(v for k, v in sizes.items() if k in dim.dim_param))
            else:
                dims.append(dim.dim_value)
        elem = value.type.tensor_type.elem_type
        if elem in _INT_TYPES:
            feeds[value.name] = np.full(dims, 1 if "mask" in value.name else 2, dtype=_INT_TYPES[elem])
        else:
            feeds[value.name] = random.standard_normal(dims).astype(np.float32)
    return feeds


def _run_with(model: onnx.ModelProto, extra: list[str], feeds: Feeds) -> dict[str, np.ndarray]:
    """The graph's outputs and the intermediate values ``extra``, unoptimised (every value exists)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    for name in extra:
        if name not in known:
            probe.graph.output.append(helper.make_empty_tensor_value_info(name))
            known.add(name)
    session = _session(probe, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def _rename_uses(model: onnx.ModelProto, old: str, new: str) -> None:
    """Every node reading ``old`` reads ``new`` instead (``old`` is no graph output)."""
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new


def split_kv_inputs(model: onnx.ModelProto) -> int:
    """Pass 1 (see the module docstring); returns how many inputs it split."""
    inputs = {value.name: value for value in model.graph.input}
    targets = [name for name in LAYER_INPUTS if name in inputs]
    if not targets:
        return 0
    feeds = probe_feeds(model, PROBES[0])
    values = _run_with(model, [out for node in model.graph.node for out in node.output], feeds)
    for name in targets:
        whole = feeds[name]
        dims = list(inputs[name].type.tensor_type.shape.dim)[2:]
        found: dict[tuple[int, int], str] = {}
        for tensor, value in values.items():
            for layer in range(whole.shape[0]):
                for kind in (0, 1):
                    if (
                        (layer, kind) not in found
                        and value.shape == whole.shape[2:]
                        and np.array_equal(value, whole[layer, kind])
                    ):
                        found[(layer, kind)] = tensor
        for (layer, kind), tensor in sorted(found.items()):
            new = layer_input(LAYER_INPUTS[name], layer, kind)
            value_info = helper.make_tensor_value_info(new, inputs[name].type.tensor_type.elem_type, None)
            value_info.type.tensor_type.shape.dim.extend(dims)
            model.graph.input.append(value_info)
            _rename_uses(model, tensor, new)
        prune(model)
        if any(name in node.input for node in model.graph.node):
            raise LeanError(f"{name!r} is still read whole after its layers were split out")
        model.graph.input.remove(inputs[name])
    return len(targets)


def _target(shapes: list[tuple[np.ndarray, tuple[int, ...]]]) -> np.ndarray | None:
    """A constant ``Reshape`` target that gives every probe's ``(target, input shape)`` its target, or None."""
    widths = {len(target) for target, _ in shapes}
    if len(widths) != 1:
        return None
    constant = []
    for i in range(widths.pop()):
        values = [int(target[i]) for target, _ in shapes]
        if all(i < len(shape) and value == shape[i] for value, (_, shape) in zip(values, shapes, strict=True)):
            constant.append(0)
        elif len(set(values)) == 1 and values[0] > 0:
            constant.append(values[0])
        else:
            constant.append(-1)
    return np.array(constant, dtype=np.int64) if constant.count(-1) <= 1 else None


def fold_reshapes(model: onnx.ModelProto) -> int:
    """Pass 2 (see the module docstring); returns how many targets it folded."""
    stored = {init.name for init in model.graph.initializer}
    reshapes = [
        node
        for node in model.graph.node
        if node.op_type == "Reshape"
        and node.input[1] not in stored
        and not any(a.name == "allowzero" and a.i for a in node.attribute)
    ]
    watched = [name for node in reshapes for name in node.input[:2]]
    runs = [_run_with(model, watched, probe_feeds(model, sizes, seed)) for seed, sizes in enumerate(PROBES)]
    folded = 0
    for node in reshapes:
        target = _target([(run[node.input[1]], run[node.input[0]].shape) for run in runs])
        if target is None:
            continue
        name = f"{node.output[0]}_target"
        model.graph.initializer.append(numpy_helper.from_array(target, name))
        node.input[1] = name
        folded += 1
    prune(model)
    return folded


def drop_zero_adds(model: onnx.ModelProto) -> int:
    """Pass 3 (see the module docstring); returns how many adds it dropped."""
    stored = {init.name: init for init in model.graph.initializer}
    candidates = []
    for node in model.graph.node:
        if node.op_type != "Add":
            continue
        for kept, other in ((node.input[0], node.input[1]), (node.input[1], node.input[0])):
            zeros = numpy_helper.to_array(stored[other]) if other in stored else None
            if zeros is not None and zeros.dtype.kind == "f" and not zeros.any():
                candidates.append((node, kept))
                break
    if not candidates:
        return 0
    watched = [name for node, kept in candidates for name in (kept, node.output[0])]
    runs = [_run_with(model, watched, probe_feeds(model, sizes, seed)) for seed, sizes in enumerate(PROBES)]
    outputs = {o.name for o in model.graph.output}
    dropped = 0
    for node, kept in candidates:
        if not all(run[kept].shape == run[node.output[0]].shape for run in runs):
            continue
        if node.output[0] in outputs:  # the value before the add takes the output's name
            producer = next(n for n in model.graph.node if kept in n.output)
            producer.output[list(producer.output).index(kept)] = node.output[0]
            _rename_uses(model, kept, node.output[0])
        else:
            _rename_uses(model, node.output[0], kept)
        model.graph.node.remove(node)
        dropped += 1
    prune(model)
    return dropped


def prune(model: onnx.ModelProto) -> int:
    """Drop the nodes and stored tensors no graph output depends on; returns how many nodes."""
    needed = {o.name for o in model.graph.output}
    kept = []
    for node in reversed(model.graph.node):
        if any(out in needed for out in node.output):
            kept.append(node)
            needed.update(node.input)
    dropped = len(model.graph.node) - len(kept)
    del model.graph.node[:]
    model.graph.node.extend(reversed(kept))
    for init in [init for init in model.graph.initializer if init.name not in needed]:
        model.graph.initializer.remove(init)
    return dropped


def make_lean(model: onnx.ModelProto, log: Callable[[str], None] = lambda _: None) -> onnx.ModelProto:
    """``model`` rewritten by the three passes; raises ``LeanError`` unless its outputs equal the original's
    bit for bit on a probe of other sizes."""
    lean = onnx.ModelProto()
    lean.CopyFrom(model)
    before = len(lean.graph.node)
    layers = split_kv_inputs(lean)
    folded = fold_reshapes(lean)
    zeros = drop_zero_adds(lean)
    check = probe_feeds(model, CHECK, seed=7)
    want = _session(model, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, check)
    split = {name: array for name, array in check.items() if name not in LAYER_INPUTS}
    for name, prefix in LAYER_INPUTS.items():
        if name in check:
            split.update(layer_inputs(prefix, check[name]))
    got = _session(lean, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, split)
    for output, a, b in zip(model.graph.output, want, got, strict=True):
        if a.shape != b.shape or not np.array_equal(a, b):
            raise LeanError(f"output {output.name!r} differs after the rewrite")
    log(
        f"{before} -> {len(lean.graph.node)} nodes: {layers} inputs split by layer, "
        f"{folded} reshape targets folded, {zeros} zero adds dropped"
    )
    return lean


def make_graph_lean(path: Path, log: Callable[[str], None] = lambda _: None) -> bool:
    """Rewrite the graph file at ``path`` in place; False (the file untouched) when no pass changed anything."""
    model = onnx.load(str(path))
    lean = make_lean(model, log)
    if lean == model:
        return False
    onnx.save(lean, str(path))
    return True


def make_folder_lean(model_dir: Path, log: Callable[[str], None] = print) -> None:
    """Rewrite every graph of a model folder in place and update its manifest's file hashes."""
    manifest = ModelManifest.load(model_dir)
    for variant, files in manifest.variants.items():
        for part, file in files.items():
            path = model_dir / file
            if make_graph_lean(path, lambda line, v=variant, p=part: log(f"{v} {p}: {line}")):
                manifest.files_sha256[file] = file_sha256(path)
    manifest.save(model_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.export.lean", description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        make_folder_lean(args.model_dir, lambda line: print(line, file=sys.stderr))
    except LeanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
