; TSX is TypeScript plus JSX: the same definitions, the same node names.
; inherits: typescript
(call_expression function: [(identifier) @reference
                            (member_expression property: (property_identifier) @reference)])
(new_expression constructor: (identifier) @reference)
