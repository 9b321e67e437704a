; Definitions for codecite's chunker. Conventions shared by every file in this folder:
;   @definition.<kind>  the whole definition node (<kind> becomes Chunk.kind)
;   @name               its name (the text is used verbatim in the symbol path)
;   @receiver           optional: the type a method belongs to (prefixes the name: Type.method)
;   @comment            comments and attributes; comment lines directly above a definition
;                       (no blank line between) belong to that definition's chunk
; When several patterns match one node, the first pattern in the file wins.
; Decorators: the chunker widens a definition to its enclosing decorated_definition.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(comment) @comment
; References (calls and instantiations): what a chunk uses, kept per chunk for following the code.
(call function: [(identifier) @reference (attribute attribute: (identifier) @reference)])
