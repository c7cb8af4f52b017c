"""Decoding strategies, each a short module over the ``DecoderState`` step interface."""
