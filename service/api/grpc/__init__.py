"""The gRPC API: ``service`` (grpc.aio) over the code ``make proto`` generates into ``proto/`` from
``proto/gecserve.proto``, the public wire contract."""
