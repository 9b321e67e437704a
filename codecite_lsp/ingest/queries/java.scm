; See python.scm for the capture conventions. Annotations sit inside the declaration's modifiers.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(line_comment) @comment
(block_comment) @comment
(method_invocation name: (identifier) @reference)
(object_creation_expression type: (type_identifier) @reference)
