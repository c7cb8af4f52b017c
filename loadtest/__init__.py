"""Load tooling, kept apart from the service: A/B runs at a fixed offered load."""
