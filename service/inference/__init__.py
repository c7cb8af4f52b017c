"""Inference: what a batcher's decoding thread runs, between batching and the engine.

A queue's decoding thread (``service.batching``) hands its running batch the jobs it takes; the running batch decodes
them on an engine (``service.engine``) and delivers each outcome. ``batches`` decodes closed batches (each to
the end) and holds the ``Outcome`` of a job; ``iteration`` batches at the iteration level (jobs join and leave
between decoder passes); ``remote`` is the running batch of ``gecserve worker``, whose jobs come through the
job streams with their decodings as JSON. The same running batches serve the gateway's own queues
(``service.pipeline.queues``) and the workers.
"""
