"""Command-line tools that run on the engine directly, without the server."""
