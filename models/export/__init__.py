"""Export Hugging Face encoder-decoder checkpoints into the gecserve ONNX model format."""
