"""One workspace root served: ``Session`` builds its live parts (index, watcher, retriever,
answerer) and closes them; the language server and the MCP server each drive sessions."""
