; See python.scm for the capture conventions. `export` wrappers are included by the chunker.

(class_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(lexical_declaration
  (variable_declarator name: (identifier) @name value: (class))) @definition.class
; A function assigned to a property: `res.send = function send(body) {`, `Foo.prototype.bar =`.
(expression_statement
  (assignment_expression
    left: (member_expression object: (_) @receiver property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(comment) @comment
(call_expression function: [(identifier) @reference
                            (member_expression property: (property_identifier) @reference)])
(new_expression constructor: (identifier) @reference)
