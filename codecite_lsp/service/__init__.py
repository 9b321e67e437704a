"""One workspace root served: ``Session`` builds its live parts (the index's ``Upkeep``, the
retriever, answerer, privacy rules) and closes them; one module per request operation (ask,
search, citations, status) takes the parts it needs. The language server and the MCP server each
drive sessions."""
