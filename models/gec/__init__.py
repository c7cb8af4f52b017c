"""The bundled default GEC model: data, synthetic errors, tokenizer, training recipe."""
