"""Every benchmark of gecserve, behind ``gecserve bench`` and ``python -m bench...``: scripts that print a table and
write JSON (speed never lives in unit tests).

- ``bench.engine``: the engine and the stages around it called in this process (decoding, diverse beam search, the
  profile of a pass, preprocessing, the rule stage); they start no server.
- ``bench.served``: gecserve started as processes of its own and driven over HTTP and gRPC: the serving benchmarks,
  the Locust load tests, A/B and overload runs, the browser's device engine, the docs' screenshots.
- ``bench.heap_diff``: the server itself under tracemalloc.
- ``bench.latency``: what all of them share, the input lines they time and the latency summary they report.
"""
