"""tfrewrite: find, rewrite and verify TensorFlow code that changes under tracing."""

__version__ = "0.1.0"
