; See python.scm for the capture conventions. The kotlin grammar has no `name:` fields: the
; name is the declaration's own identifier child. Annotations sit inside the modifiers.

(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.object
(function_declaration (simple_identifier) @name) @definition.function
(line_comment) @comment
(multiline_comment) @comment
