"""codecite-lsp: a language server that answers questions about a repository with verified citations."""

__version__ = "0.1.0"
