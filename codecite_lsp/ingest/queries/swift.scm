; See python.scm for the capture conventions. class/struct/enum/extension are all
; class_declaration in this grammar; attributes sit inside the modifiers.

(class_declaration name: (type_identifier) @name) @definition.class
(class_declaration name: (user_type (type_identifier) @name)) @definition.extension
(protocol_declaration name: (type_identifier) @name) @definition.protocol
(function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.method
(comment) @comment
(multiline_comment) @comment
