package runrecord

import (
	"math"
	"sort"

	"github.com/treeloop/treeloop/lib/tree"
)

// check is schemas/run_record.v1.schema.json written out for a decoded
// document (jsonstrict: objects, arrays, strings, float64, bool, nil): ""
// when the schema accepts v, else the first problem as "<pointer>: <what>".
// TestCheckAgreesWithSchema holds it to the full validator.
func check(v any) string { return checkObject(v, "", recordFields) }

// field is one property, required unless optional, and the check of its
// value at ptr.
type field struct {
	name     string
	check    func(x any, ptr string) string
	optional bool
}

// req is a required field.
func req(name string, check func(x any, ptr string) string) field {
	return field{name: name, check: check}
}

// recordFields are the record's properties, all required but pause, and their
// checks.
var recordFields = recordSchema()

func recordSchema() []field {
	runnerFields := []field{req("pid", count), req("host", str)}
	nodeFields := []field{req("total", count), req("passed", count), req("open", count), req("stuck", count)}
	usageFields := []field{req("input_tokens", count), req("output_tokens", count), req("cached_tokens", count), req("cost_usd", nonNegative)}
	budgetFields := []field{req("max_iterations", count), req("max_tokens", count), req("max_cost_usd", nonNegative)}
	lastFields := []field{req("iter", atLeast1), req("node_id", str), req("status", str), req("guard", str), req("result", str)}
	entryFields := []field{req("at", str), req("kind", pattern(isKind, "not a kind (^[a-z][a-z0-9_]*$)")), req("message", str)}
	pauseFields := []field{req("count", count), req("total_secs", count), req("since", orNull(str)), req("until", orNull(str)), req("reason", str)}
	return []field{
		req("version", func(x any, ptr string) string { return want(x == any(1.0), ptr, "not 1") }),
		req("id", pattern(tree.ValidID, "not a record id")),
		req("run_id", pattern(tree.ValidID, "not a run id")),
		req("branch", pattern(func(s string) bool { return s != "" }, "empty")),
		req("goal_title", str),
		req("status", pattern(isStatus, "not a run status")),
		req("reason", str),
		req("started_at", str),
		req("finished_at", orNull(str)),
		req("updated_at", str),
		req("runner", object(runnerFields)),
		req("iterations", count),
		req("nodes", object(nodeFields)),
		req("usage", object(usageFields)),
		req("budgets", object(budgetFields)),
		req("last_iteration", orNull(object(lastFields))),
		req("head", orNull(pattern(isHexSHA, "not a commit id"))),
		{name: "pause", check: orNull(object(pauseFields)), optional: true},
		req("log", func(x any, ptr string) string {
			items, ok := x.([]any)
			if !ok {
				return ptr + ": not an array"
			}
			if len(items) > MaxLog {
				return ptr + ": more than 200 entries"
			}
			for i, it := range items {
				if p := checkObject(it, ptr+"/"+itoa(i), entryFields); p != "" {
					return p
				}
			}
			return ""
		}),
	}
}

// checkObject checks an object with exactly fields, all required.
func checkObject(x any, ptr string, fields []field) string {
	m, ok := x.(map[string]any)
	if !ok {
		return at(ptr) + ": not a JSON object"
	}
	present := 0
	for _, f := range fields {
		if _, ok := m[f.name]; ok {
			present++
		} else if !f.optional {
			return at(ptr) + ": missing property " + f.name
		}
	}
	if len(m) != present {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first problem is the same every time
		for _, k := range keys {
			known := false
			for _, f := range fields {
				known = known || f.name == k
			}
			if !known {
				return ptr + "/" + k + ": unknown property"
			}
		}
	}
	for _, f := range fields {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		if p := f.check(v, ptr+"/"+f.name); p != "" {
			return p
		}
	}
	return ""
}

func object(fields []field) func(any, string) string {
	return func(x any, ptr string) string { return checkObject(x, ptr, fields) }
}

func orNull(c func(any, string) string) func(any, string) string {
	return func(x any, ptr string) string {
		if x == nil {
			return ""
		}
		return c(x, ptr)
	}
}

func pattern(ok func(string) bool, what string) func(any, string) string {
	return func(x any, ptr string) string {
		s, isStr := x.(string)
		return want(isStr && ok(s), ptr, what)
	}
}

func str(x any, ptr string) string {
	_, ok := x.(string)
	return want(ok, ptr, "not a string")
}

func count(x any, ptr string) string {
	f, ok := x.(float64)
	return want(ok && f == math.Trunc(f) && f >= 0, ptr, "not an integer >= 0")
}

func atLeast1(x any, ptr string) string {
	f, ok := x.(float64)
	return want(ok && f == math.Trunc(f) && f >= 1, ptr, "not an integer >= 1")
}

func nonNegative(x any, ptr string) string {
	f, ok := x.(float64)
	return want(ok && f >= 0, ptr, "not a number >= 0")
}

func want(ok bool, ptr, what string) string {
	if ok {
		return ""
	}
	return ptr + ": " + what
}

func at(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func isStatus(s string) bool {
	switch s {
	case Running, Complete, Stuck, Limit, Timeout, Interrupted, Canceled, Error, Paused, Waiting:
		return true
	}
	return false
}

// isHexSHA matches ^[0-9a-f]{40,64}$.
func isHexSHA(s string) bool {
	if len(s) < 40 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isKind matches ^[a-z][a-z0-9_]*$.
func isKind(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
