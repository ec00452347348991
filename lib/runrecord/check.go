package runrecord

// check is the schema's plain check (check_gen.go, generated from
// schemas/run_record.v1.schema.json): "" when the schema accepts a decoded
// document, else the first problem as "<pointer>: <what>".
// TestCheckAgreesWithSchema holds it to the full validator.
//
//go:generate go run ../schema/internal/schemagen -schema run_record.v1 -check check -o check_gen.go -what "/id=a record id" -what "/run_id=a run id" -what "/status=a run status" -what "/head=a commit id" -what "/log/*/kind=a kind (^[a-z][a-z0-9_]*$)"
