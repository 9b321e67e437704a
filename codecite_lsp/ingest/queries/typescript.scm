; See python.scm for the capture conventions. `export` wrappers are included by the chunker.
; Not `; inherits: javascript`: TypeScript names classes with type_identifier, and a pattern
; the grammar cannot match is a query error, so the shared lines are repeated here.

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type
(internal_module name: (_) @name) @definition.module
(module name: (_) @name) @definition.module
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
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
(class_body (decorator) @comment)
(call_expression function: [(identifier) @reference
                            (member_expression property: (property_identifier) @reference)])
(new_expression constructor: (identifier) @reference)
