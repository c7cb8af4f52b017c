"""Engine-level benchmarks: the engine, its decoding strategies, the batcher and the text stages called in this
process; none starts a server."""
