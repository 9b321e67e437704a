; See python.scm for the capture conventions. `template <...>` wrappers are included by the
; chunker; out-of-class methods keep their qualified name (`Matrix::at`).

(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier)
                 (destructor_name) (operator_name)] @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition
  type: [(struct_specifier body: (field_declaration_list))
         (class_specifier body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct
(namespace_definition name: (namespace_identifier) @name) @definition.namespace
(comment) @comment
(call_expression function: [(identifier) @reference (field_expression field: (field_identifier) @reference)])
