"""Served benchmarks and load tooling, kept apart from the service: gecserve started as processes of its own and
driven as clients drive it. Locust load tests (``locustfile.py``, ``shapes.py``, ``measure.py``, ``report.py``), A/B
runs at a fixed offered load, the memory drill, and the serving benchmarks behind ``gecserve bench serve`` and
``gecserve bench scaleout`` (``spawn.py`` starts the real servers they and the integration tests talk to)."""
