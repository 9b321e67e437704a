"""Retrieval: a question or query -> ranked chunks and the sources a prompt shows."""
