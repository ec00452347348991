package textclean

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripANSI(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "ok  \tpkg\t0.01s\n", "ok  \tpkg\t0.01s\n"},
		{"utf-8 kept", "café — ✓ 日本\n", "café — ✓ 日本\n"},
		{"sgr colour", "\x1b[31mFAIL\x1b[0m: TestX\n", "FAIL: TestX\n"},
		{"sgr reset short", "\x1b[mplain\x1b[1;32;48;5;236mgreen", "plaingreen"},
		{"sgr truecolor colon", "\x1b[38:2::255:0:0mred\x1b[39m", "red"},
		{"private mode", "\x1b[?25lhidden cursor\x1b[?25h\x1b[?2004h", "hidden cursor"},
		{"cursor and erase", "\x1b[2K\x1b[1G\x1b[3Aline\x1b[J", "line"},
		{"csi with intermediate", "a\x1b[1 qb", "ab"},
		{"csi greater-than", "\x1b[>4;2mx", "x"},
		{"csi cut at end", "text\x1b[31", "text"},
		{"csi broken by newline", "a\x1b[31\nb", "a\nb"},
		{"osc title bel", "\x1b]0;my title\x07after", "after"},
		{"osc hyperlink st", "see \x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ here", "see link here"},
		{"osc open ends at line", "\x1b]0;title never ended\nnext line\n", "\nnext line\n"},
		{"osc open at end", "x\x1b]2;tit", "x"},
		{"osc broken by escape", "\x1b]0;t\x1b[31mred", "red"},
		{"osc ended by c1 st", "\x1b]0;t\u009cafter", "after"},
		{"dcs", "\x1bPq#0;2;0;0;0\x1b\\done", "done"},
		{"apc pm sos", "\x1b_apc\x1b\\\x1b^pm\x07\x1bXsos\x1b\\ok", "ok"},
		{"two-byte", "\x1b7save\x1b8\x1bcreset\x1b=\x1b>\x1bM", "savereset"},
		{"charset designation", "\x1b(Bplain\x1b)0\x1b[m", "plain"},
		{"nF cut at end", "x\x1b(", "x"},
		{"lone esc at end", "end\x1b", "end"},
		{"lone esc before control", "a\x1b\nb", "a\nb"},
		{"lone esc before utf-8", "a\x1bébc", "aébc"},
		{"double esc", "\x1b\x1b[1mbold", "bold"},
		{"c1 csi", "\u009b31mred\u009b0m", "red"},
		{"c1 osc", "\u009d0;title\u0007x", "x"},
		{"c1 other dropped", "a\u0085b\u0090c\u009c", "ab"},
		{"c0 dropped", "a\x00b\x07c\x08d\x0be\x0cf\x7fg", "abcdefg"},
		{"crlf kept", "line one\r\nline two\r\n", "line one\r\nline two\r\n"},
		{"progress cr kept", "10%\r50%\r100%\n", "10%\r50%\r100%\n"},
		{"tab kept", "\tindented\n", "\tindented\n"},
		{"not c1: latin-1 letters", "\u00a0\u00e9\u00c2", "\u00a0\u00e9\u00c2"},
		{"invalid utf-8 kept", "a\xc2b\xffc\x9bd", "a\xc2b\xffc\x9bd"},
		{"lone lead byte at end", "a\xc2", "a\xc2"},
		{"no c1 joined across a drop", "\xc2\x04\x99x", "x"},
		{"no c1 joined across a sequence", "\xc2\x1b[0m\x9bx", "x"},
		{"pytest colour line", "\x1b[32m\x1b[1m3 passed\x1b[0m\x1b[32m in 0.01s\x1b[0m\n", "3 passed in 0.01s\n"},
		{"tput sgr0", "\x1b[1mbold\x1b(B\x1b[m rest", "bold rest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripANSI(tc.in); got != tc.want {
				t.Errorf("StripANSI(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestStripANSIReturnsCleanTextItself(t *testing.T) {
	in := strings.Repeat("clean line\twith tab\r\n", 100)
	if got := StripANSI(in); got != in {
		t.Fatal("clean text changed")
	}
	if n := testing.AllocsPerRun(10, func() { _ = StripANSI(in) }); n != 0 {
		t.Fatalf("clean text allocated %v times", n)
	}
}

func FuzzStripANSI(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred\x1b[0m", "\x1b]0;t\x07", "\x1b", "\u009b1m", "a\x00\r\n\t", "\x1b]8;;u\x1b\\l"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := StripANSI(s)
		if StripANSI(got) != got {
			t.Fatalf("StripANSI(%q) = %q is not stable", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("StripANSI(%q) = %q grew", s, got)
		}
		for i := 0; i < len(got); i++ {
			if c := got[i]; c == esc || dropped(c) || isC1(got, i) {
				t.Fatalf("StripANSI(%q) = %q keeps control byte %#x at %d", s, got, c, i)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("StripANSI(%q) = %q broke valid UTF-8", s, got)
		}
	})
}
