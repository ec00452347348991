package textclean

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripANSI(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "ok  \tgithub.com/x 0.1s\r\n", "ok  \tgithub.com/x 0.1s\r\n"},
		{"empty", "", ""},
		{"utf-8 kept", "état: £5 — ✓ 日本\n", "état: £5 — ✓ 日本\n"},
		{"colour", "\x1b[31mFAIL\x1b[0m TestX", "FAIL TestX"},
		{"colour, no parameters", "\x1b[mreset", "reset"},
		{"256 colours and bold", "\x1b[1;38;5;196mred\x1b[39;49m", "red"},
		{"true colour", "\x1b[38:2::255:0:0mred", "red"},
		{"cursor and erase", "50%\x1b[2K\x1b[1G100%\x1b[?25h", "50%100%"},
		{"private mode", "\x1b[?1049h\x1b[?1049l", ""},
		{"intermediate byte", "a\x1b[1 qb", "ab"},
		{"pytest line", "\x1b[32m\x1b[1m3 passed\x1b[0m\x1b[32m in 0.01s\x1b[0m\n", "3 passed in 0.01s\n"},
		{"OSC title with BEL", "\x1b]0;my title\x07text", "text"},
		{"OSC title with ST", "\x1b]2;title\x1b\\text", "text"},
		{"OSC 8 hyperlink", "see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."},
		{"OSC cut at the end of its line", "\x1b]0;never ended\nnext line", "\nnext line"},
		{"OSC cut by another sequence", "\x1b]0;title\x1b[31mred", "red"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"APC, PM, SOS", "\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\x", "x"},
		{"charset", "\x1b(Bline\x1b)0", "line"},
		{"save and restore cursor", "\x1b7moved\x1b8", "moved"},
		{"keypad modes and reset", "\x1b=\x1b>\x1bcx", "x"},
		{"lone ESC at the end", "text\x1b", "text"},
		{"lone ESC before a control", "a\x1b\nb", "a\nb"},
		{"ESC ESC", "a\x1b\x1b[1mb", "ab"},
		{"CSI cut by a newline", "a\x1b[12\nb", "a\nb"},
		{"CSI cut at the end", "a\x1b[12;", "a"},
		{"CSI with a byte out of range", "a\x1b[1\x01b", "a\x01b"},
		{"ESC and intermediates cut short", "a\x1b(", "a"},
		{"8-bit CSI", "a\u009b31mred\u009b0m", "ared"},
		{"8-bit OSC with 8-bit ST", "a\u009d0;title\u009cb", "ab"},
		{"8-bit OSC with BEL", "a\u009d0;title\x07b", "ab"},
		{"other C1 controls", "a\u0085b\u0080c\u009fx\x07d", "abcd"},
		{"latin-1 supplement kept", "\u00a0\u00a3\u00bf", "\u00a0\u00a3\u00bf"},
		{"C2 alone, nothing to strip", "a\xc2", "a\xc2"},
		{"C2 alone, at the end", "\x1b[0ma\xc2", "a"},
		{"C2 that would pair after a removal", "\xc2\u009a\x99", "\x99"},
		{"invalid UTF-8 kept", "a\xff\xfeb\x1b[0m", "a\xff\xfeb"},
	} {
		if got := StripANSI(c.in); got != c.want {
			t.Errorf("%s: StripANSI(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// A string without escapes is returned as it is, not copied.
func TestStripANSIUnchanged(t *testing.T) {
	s := strings.Repeat("plain text, £ and é\n", 100)
	if got := StripANSI(s); got != s || &[]byte(got)[0] == nil {
		t.Fatal("changed")
	}
	if testing.AllocsPerRun(10, func() { StripANSI(s) }) != 0 {
		t.Fatal("a string without escapes was copied")
	}
}

// FuzzStripANSI: the result holds no ESC and no C1 control, is never
// longer than the input, is valid UTF-8 when the input is, and stripping
// it again changes nothing.
func FuzzStripANSI(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[0m", "\x1b]8;;u\x1b\\t\x1b]8;;\x1b\\", "a\u009b1mb", "\x1b", "é\x1b(B", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := StripANSI(s)
		if len(got) > len(s) || hasEscape(got) {
			t.Fatalf("StripANSI(%q) = %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("StripANSI(%q) = %q: not UTF-8", s, got)
		}
		if again := StripANSI(got); again != got {
			t.Fatalf("not idempotent: %q, then %q", got, again)
		}
	})
}
