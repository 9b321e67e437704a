; See python.scm for the capture conventions.

(function_definition name: (word) @name) @definition.function
(comment) @comment
