"""Who may call the service and how much: API keys (``auth``), their rate limits (``ratelimit``), both checked by
``control`` for every protocol, and the request-body limit of HTTP (``limits``)."""
