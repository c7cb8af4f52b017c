"""Pure text handling around the model: sentence splitting, normalisation, edit extraction, offsets, categories,
and paragraphs to model units and back (``units``).

Nothing here touches the model, and nothing does I/O but the spelling stage loading its dictionaries. All offsets
are code-point offsets into the ORIGINAL paragraph (``service.text.offsets`` converts them to UTF-16 code units for
JavaScript editors).
"""
