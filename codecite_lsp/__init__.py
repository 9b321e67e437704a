"""codecite-lsp: answers questions about a repository and proves every answer with citations."""

__version__ = "0.1.0"
