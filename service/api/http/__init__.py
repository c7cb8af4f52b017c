"""The HTTP API (FastAPI): the application (``app``), its route modules, its error answers (``errors``) and the
routes of the browser's pages and files (``front``, ``editor``, ``dashboard``, ``device``; the files themselves are
in ``service/web/``)."""
