; TSX is TypeScript plus JSX: the same definitions, the same node names.
; inherits: typescript
