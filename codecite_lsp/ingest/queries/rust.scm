; See python.scm for the capture conventions. An impl block is named after its type, so its
; functions get symbol paths like `Point.distance`.

(function_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(impl_item type: (type_identifier) @name) @definition.impl
(impl_item type: (generic_type type: (type_identifier) @name)) @definition.impl
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @definition.impl
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(line_comment) @comment
(block_comment) @comment
(attribute_item) @comment
(call_expression function: [(identifier) @reference
                            (field_expression field: (field_identifier) @reference)
                            (scoped_identifier name: (identifier) @reference)])
(macro_invocation macro: (identifier) @reference)
