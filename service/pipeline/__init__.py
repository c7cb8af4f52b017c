"""The request path shared by the HTTP and gRPC APIs (no web framework in here)."""
