"""``gecserve`` command line: one entry point, a module per sub-command.

Build-time commands (``export``, ``eval``) import torch/transformers lazily, only when run.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "serve": ("service.api.server", "run the HTTP + gRPC service"),
    "worker": ("service.worker", "a worker: an engine fed from Redis Streams (for serve --queue)"),
    "engine": ("service.engine_process", "an engine process fed by front ends (started by serve --front-ends)"),
    "correct": ("service.commands.correct", "correct text from stdin, one paragraph per line"),
    "categorize": ("service.commands.categorize", "edits between source<TAB>corrected lines, with categories"),
    "keys": ("service.commands.keys", "API keys: 'keys hash' prints the stored form of a key read on stdin"),
    "export": ("models.export.exporter", "export a Hugging Face checkpoint to the ONNX model format"),
    "eval": ("models.gec.evaluate", "GLEU and change statistics of a model on a dev set"),
    "bench": (
        None,
        "benchmarks: 'bench decoding', 'diversity', 'profile', 'serve', 'preprocess', 'scaleout', 'stages', 'device', "
        "'rules', 'soak'",
    ),
}
BENCHES = {
    "decoding": "bench.engine.decoding",
    "diversity": "bench.engine.diversity",
    "profile": "bench.engine.profile",
    "serve": "bench.served.serve",
    "preprocess": "bench.engine.preprocess",
    "scaleout": "bench.served.scaleout",
    "stages": "bench.served.stages",
    "device": "bench.served.device",
    "rules": "bench.engine.rules",
    "soak": "bench.served.soak",
}


def _usage() -> str:
    lines = ["usage: gecserve COMMAND [options]", "", "commands:"]
    lines += [f"  {name:10s} {help_text}" for name, (_, help_text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        print(_usage(), file=sys.stderr if args and args[0] not in ("-h", "--help") else sys.stdout)
        return 0 if not args or args[0] in ("-h", "--help") else 2
    command, rest = args[0], args[1:]
    if command == "bench":
        if not rest or rest[0] not in BENCHES:
            print(f"usage: gecserve bench {{{','.join(BENCHES)}}} [options]", file=sys.stderr)
            return 2
        module, rest = BENCHES[rest[0]], rest[1:]
    else:
        module = COMMANDS[command][0]
    result = importlib.import_module(module).main(rest)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
