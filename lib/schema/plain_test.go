package schema_test

import (
	"testing"

	"github.com/treeloop/treeloop/lib/schema"
)

// TestEntries: every name is checked by names, at ptr/<name>, and the
// value of each name not listed by extra, in sorted order, the first
// problem winning; a listed name's value is not extra's; nil checks
// check nothing; what is not an object passes (Object judges it).
func TestEntries(t *testing.T) {
	upper := func(x any, ptr string) string {
		if s := x.(string); s == "" || s[0] < 'A' || s[0] > 'Z' {
			return schema.Fail(ptr, "not upper")
		}
		return ""
	}
	str := func(x any, ptr string) string {
		if _, ok := x.(string); !ok {
			return schema.Fail(ptr, "not a string")
		}
		return ""
	}
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		x      any
		listed []string
		names  func(any, string) string
		extra  func(any, string) string
		want   string
	}{
		{"all good", m("A", "1", "B", "2"), nil, upper, str, ""},
		{"a name refused", m("A", "1", "b", "2"), nil, upper, str, "/o/b: not upper"},
		{"the first in sorted order", m("Z", 1, "B", 2), nil, upper, str, "/o/B: not a string"},
		{"names before values", m("a", 1), nil, upper, str, "/o/a: not upper"},
		{"a listed value is not extra's", m("A", 1, "B", "2"), []string{"A"}, upper, str, ""},
		{"a listed name is still a name", m("a", 1), []string{"a"}, upper, str, "/o/a: not upper"},
		{"no name check", m("a", "1"), nil, nil, str, ""},
		{"no value check", m("A", 1), nil, upper, nil, ""},
		{"not an object", []any{1}, nil, upper, str, ""},
		{"a name's pointer escaped", m("a/b~\n", "1"), nil, upper, str, "/o/a~1b~0%0A: not upper"},
	} {
		if got := schema.Entries(tt.x, "/o", tt.listed, tt.names, tt.extra); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestToken: "~" and "/" as RFC 6901 escapes them, controls and DEL
// percent-encoded, the rest (UTF-8 included) as it is.
func TestToken(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "env": "env", "a/b": "a~1b", "~1": "~01", "a\nb": "a%0Ab", "\x7f\x00": "%7F%00", "Ä %": "Ä %",
	} {
		if got := schema.Token(in); got != want {
			t.Errorf("Token(%q) = %q, want %q", in, got, want)
		}
	}
}
