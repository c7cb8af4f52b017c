"""Model artifacts and the build-time tools that make them (training, export, evaluation)."""
