"""LanguageTool's HTTP API over the pipeline: ``/v2/check`` (``check``), its parameters (``params``), its answer
(``matches``) and what its clients call at start-up (``startup``)."""
