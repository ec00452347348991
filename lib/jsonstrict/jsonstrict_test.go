package jsonstrict_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
)

// TestDecodeErrors checks every rejection: the exact position and message.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line, col int
		msg       string
	}{
		// Empty documents carry no position.
		{"empty", "", 0, 0, "empty document"},
		{"spaces", "   ", 0, 0, "empty document"},
		{"whitespace mix", " \n\t\r\n ", 0, 0, "empty document"},

		// Byte order mark.
		{"bom before object", "\xEF\xBB\xBF{}", 1, 1, "starts with a UTF-8 byte order mark; save the file without it"},
		{"bom alone", "\xEF\xBB\xBF", 1, 1, "starts with a UTF-8 byte order mark; save the file without it"},
		{"bom after space", " \xEF\xBB\xBF{}", 1, 2, "invalid character '\\ufeff' at start of value"},

		// Invalid UTF-8: the first bad byte, its line and byte column.
		{"bad byte at start", "\xff", 1, 1, "invalid UTF-8 byte 0xff"},
		{"bad byte in string on line 2", "{\"a\":\n \"x\xffy\"}", 2, 4, "invalid UTF-8 byte 0xff"},
		{"truncated sequence", "\"\xe2\x82\"", 1, 2, "invalid UTF-8 byte 0xe2"},
		{"overlong encoding", "\xc0\xaf", 1, 1, "invalid UTF-8 byte 0xc0"},
		{"encoded surrogate", "\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8 byte 0xed"},
		{"partial bom", "\xEF\xBB{}", 1, 1, "invalid UTF-8 byte 0xef"},
		{"bad byte after multibyte", "[\"é\",\n\"ü\xfe\"]", 2, 4, "invalid UTF-8 byte 0xfe"},

		// Duplicate keys, at the second occurrence, nested too.
		{"duplicate top-level key", `{"a":1,"a":2}`, 1, 8, `duplicate key "a"`},
		{"duplicate nested key", `{"x":{"b":1,"b":2}}`, 1, 13, `duplicate key "b"`},
		{"duplicate key in array element", `{"a":[{"b":1,"b":2}]}`, 1, 14, `duplicate key "b"`},
		{"duplicate key on line 3", "{\n  \"a/b\": 1,\n  \"a/b\": 2\n}", 3, 3, `duplicate key "a/b"`},
		{"duplicate key with tilde", `{"a~b":1,"a~b":2}`, 1, 10, `duplicate key "a~b"`},
		{"duplicate key by escape", `{"é":1,"\u00e9":2}`, 1, 9, `duplicate key "é"`},
		{"duplicate empty key", `{"":1,"":2}`, 1, 7, `duplicate key ""`},
		{"duplicate key same value", `{"a":1,"a":1}`, 1, 8, `duplicate key "a"`},

		// Trailing data after the one value.
		{"trailing word", `{} x`, 1, 4, "invalid character 'x' after top-level value"},
		{"second object", `{}{}`, 1, 3, "invalid character '{' after top-level value"},
		{"trailing bracket", `{"a":1}]`, 1, 8, "invalid character ']' after top-level value"},
		{"leading zero", `01`, 1, 2, "invalid character '1' after top-level value"},

		// Malformed JSON, located.
		{"truncated literal", "{\n  \"a\": tru\n}", 2, 11, "invalid character '\\n' in literal true (expecting 'e')"},
		{"unterminated array", `[1,2`, 1, 5, "unexpected EOF"},
		{"eof in literal", `tru`, 1, 4, "unexpected EOF"},
		{"lone minus", `-`, 1, 1, "unexpected EOF"},
		{"missing colon", `{"a" 1}`, 1, 6, "invalid character '1' after object name (expecting ':')"},
		{"missing comma", `[1 2]`, 1, 4, "invalid character '2' after array element (expecting ',' or ']')"},
		{"single quotes", `'a'`, 1, 1, "invalid character '\\'' at start of value"},
		{"NaN", `{"a":NaN}`, 1, 6, "invalid character 'N' at start of value"},
		{"control character in string", "\"a\x01\"", 1, 3, "invalid character '\\x01' in string (expecting non-control character)"},
		{"bad escape", `"\x01"`, 1, 2, "invalid escape sequence `\\x` in string"},
		{"lone surrogate escape", `"\ud800"`, 1, 2, "invalid surrogate pair `\\ud800\"` in string"},
		{"mismatched bracket", `{"a":[]]`, 1, 8, "invalid character ']' after object value (expecting ',' or '}')"},
		{"number out of range", `{"n":1e400}`, 1, 6, "value out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsonstrict.Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("Decode(%q) = %#v, want an error", tt.in, v)
			}
			if v != nil {
				t.Errorf("Decode(%q) value = %#v, want nil with an error", tt.in, v)
			}
			var je *jsonstrict.Error
			if !errors.As(err, &je) {
				t.Fatalf("Decode(%q) error %T is not *jsonstrict.Error", tt.in, err)
			}
			want := jsonstrict.Error{Line: tt.line, Col: tt.col, Msg: tt.msg}
			if *je != want {
				t.Errorf("Decode(%q) error = %#v, want %#v", tt.in, *je, want)
			}
		})
	}
}

// TestErrorString checks how a located and an unlocated error read.
func TestErrorString(t *testing.T) {
	tests := []struct {
		err  jsonstrict.Error
		want string
	}{
		{jsonstrict.Error{Msg: "empty document"}, "empty document"},
		{jsonstrict.Error{Line: 3, Col: 7, Msg: `duplicate key "a"`}, `line 3 column 7: duplicate key "a"`},
		{jsonstrict.Error{Line: 1, Col: 1, Msg: "x"}, "line 1 column 1: x"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
	_, err := jsonstrict.Decode([]byte("{\n\"a\":1,\"a\":2}"))
	if got, want := err.Error(), `line 2 column 7: duplicate key "a"`; got != want {
		t.Errorf("Decode error string = %q, want %q", got, want)
	}
}

// TestDecodeValues checks accepted documents decode to the generic types.
func TestDecodeValues(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"object", `{"a":1,"b":[true,false,null],"c":"x"}`, map[string]any{"a": 1.0, "b": []any{true, false, nil}, "c": "x"}},
		{"surrounding whitespace", " {\"a\":1}\n\n  ", map[string]any{"a": 1.0}},
		{"top-level string", `"s"`, "s"},
		{"top-level number", `-1.5e2`, -150.0},
		{"top-level null", `null`, nil},
		{"escaped quote and bracket", ` ["\"[[["]`, []any{`"[[[`}},
		{"replacement character is valid", "\"\xef\xbf\xbd\"", "\uFFFD"},
		{"bom inside a string is valid", "\"\xEF\xBB\xBF\"", "\uFEFF"},
		{"escapes", `"\t\n\u00e9\ud83d\ude00"`, "\t\né😀"},
		{"html characters", `"<a>&"`, "<a>&"},
		{"different keys", `{"a":1,"A":2}`, map[string]any{"a": 1.0, "A": 2.0}},
		{"same key in sibling objects", `[{"a":1},{"a":2}]`, []any{map[string]any{"a": 1.0}, map[string]any{"a": 2.0}}},
		{"same key at two levels", `{"a":{"a":1}}`, map[string]any{"a": map[string]any{"a": 1.0}}},
		{"big integer as float", `12345678901234567890`, 12345678901234567890.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonstrict.Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("Decode(%q) error: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestDecodeDepth checks the MaxDepth limit and where it is reported.
func TestDecodeDepth(t *testing.T) {
	if jsonstrict.MaxDepth != 1000 {
		t.Fatalf("MaxDepth = %d; the cases below assume 1000", jsonstrict.MaxDepth)
	}
	deepObj := strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001)
	tests := []struct {
		name      string
		in        string
		line, col int // 0: accepted
	}{
		{"100000 open brackets", strings.Repeat("[", 100000), 1, 1001},
		{"1001 balanced arrays", strings.Repeat("[", 1001) + strings.Repeat("]", 1001), 1, 1001},
		{"1001 nested objects", deepObj, 1, 5*1000 + 1},
		{"after two lines", "\n\n  " + strings.Repeat("[", 2000), 3, 3 + 1000},
		{"mixed arrays and objects", strings.Repeat(`[{"k":`, 501), 1, 1 + 6*500},
		{"1000 balanced arrays", strings.Repeat("[", 1000) + strings.Repeat("]", 1000), 0, 0},
		{"brackets inside a string do not count", `["` + strings.Repeat("[{", 5000) + `"]`, 0, 0},
		{"brackets after an escaped quote", `["\"` + strings.Repeat("[", 5000) + `"]`, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsonstrict.Decode([]byte(tt.in))
			if tt.line == 0 {
				if err != nil {
					t.Fatalf("Decode error: %v", err)
				}
				if v == nil {
					t.Fatalf("Decode = nil, want a value")
				}
				return
			}
			want := &jsonstrict.Error{Line: tt.line, Col: tt.col, Msg: "nesting deeper than 1000 levels"}
			var je *jsonstrict.Error
			if !errors.As(err, &je) || *je != *want {
				t.Fatalf("Decode error = %#v, want %#v", err, want)
			}
		})
	}
}

// TestDecodeLargeString checks a multi-megabyte string is accepted intact.
func TestDecodeLargeString(t *testing.T) {
	s := strings.Repeat("abcdefgh", 512*1024) // 4 MiB
	v, err := jsonstrict.Decode([]byte(`{"s":"` + s + `"}`))
	if err != nil {
		t.Fatalf("Decode error: %v", err)
	}
	got, ok := v.(map[string]any)["s"].(string)
	if !ok || got != s {
		t.Fatalf("Decode lost the string: got %d bytes, want %d", len(got), len(s))
	}
}

// TestPosition checks byte offsets map to 1-based lines and byte columns.
func TestPosition(t *testing.T) {
	data := []byte("ab\ncdé\n\nx")
	tests := []struct {
		off       int64
		line, col int
	}{
		{0, 1, 1},
		{1, 1, 2},
		{2, 1, 3}, // the newline itself is on line 1
		{3, 2, 1},
		{5, 2, 3},
		{7, 2, 5}, // é is two bytes
		{8, 3, 1},
		{9, 4, 1},
		{10, 4, 2}, // end of data
		{99, 4, 2}, // clamped to the end
	}
	for _, tt := range tests {
		line, col := jsonstrict.Position(data, tt.off)
		if line != tt.line || col != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
		}
	}
	if line, col := jsonstrict.Position(nil, 0); line != 1 || col != 1 {
		t.Errorf("Position(nil, 0) = %d:%d, want 1:1", line, col)
	}
}
