"""Which arm serves a request: the table of arms, A/B experiments, sticky assignment, their shared state
in Redis and the statistics of a comparison."""
