; See python.scm for the capture conventions. Names keep their table prefix (`M.setup`, `M:describe`).

(function_declaration
  name: [(identifier) (dot_index_expression) (method_index_expression)] @name) @definition.function
(comment) @comment
