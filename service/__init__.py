"""gecserve: grammatical error correction serving runtime (never imports torch)."""
