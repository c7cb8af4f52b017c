"""Which backend (arm) serves a request: one function today, A/B experiments later."""
