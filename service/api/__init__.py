"""The protocols over the pipeline, each in a package of its own: ``http`` (FastAPI: the routes, the pages' routes,
the application), ``grpc`` (grpc.aio and the generated code of ``grpc/proto/gecserve.proto``), ``languagetool``
(LanguageTool's ``/v2`` API) and ``access`` (API keys, rate limits, the body limit). Beside them, what every
protocol shares: ``entry`` (the one request entry), ``schemas`` (the request and response models) and ``responses``
(the one error shape); and ``server``, ``gecserve serve``, which runs HTTP and gRPC in one process. The browser's
files are not here but in ``service/web/``."""
