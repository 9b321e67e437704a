; See python.scm for the capture conventions. Only structs/enums with a body are definitions.

(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(type_definition
  type: [(struct_specifier body: (field_declaration_list))
         (union_specifier body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct
(type_definition
  type: (enum_specifier body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(comment) @comment
(call_expression function: (identifier) @reference)
