; See python.scm for the capture conventions.

(method_declaration
  receiver: (parameter_list
    (parameter_declaration type: [(type_identifier) @receiver
                                  (pointer_type (type_identifier) @receiver)]))
  name: (field_identifier) @name) @definition.method
(method_declaration name: (field_identifier) @name) @definition.method
(function_declaration name: (identifier) @name) @definition.function
(type_declaration (type_spec name: (type_identifier) @name type: (struct_type))) @definition.struct
(type_declaration (type_spec name: (type_identifier) @name type: (interface_type))) @definition.interface
(comment) @comment
(call_expression function: [(identifier) @reference
                            (selector_expression field: (field_identifier) @reference)])
(composite_literal type: (type_identifier) @reference)
