"""Pure text handling around the model: sentence splitting, normalisation, edit extraction, offsets, categories.

Nothing here does I/O or touches the model. All offsets are code-point offsets into the ORIGINAL paragraph
(``service.text.offsets`` converts them to UTF-16 code units for JavaScript editors).
"""
