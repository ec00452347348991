// Package textclean makes text that a guard or an agent wrote fit to be
// read by a person outside a terminal: in the web UI, a prompt, a log shown
// by iter-log, a pull-request body. What it cleans is a copy; the logs on
// disk stay as they were written.
package textclean

import (
	"strings"
	"unicode/utf8"
)

const esc = 0x1b

// StripANSI returns s without its terminal escape sequences (ECMA-48), so
// that colour codes and cursor moves do not reach a page or a prompt as
// "[31m" and the like:
//
//   - CSI: ESC [ parameters, intermediates, a final byte (colours, cursor
//     moves, erase), and its 8-bit form U+009B;
//   - OSC, DCS, SOS, PM and APC strings: ESC ] (P, X, ^, _) up to BEL or
//     ST (ESC \), and their 8-bit forms U+009D, U+0090, U+0098, U+009E,
//     U+009F up to BEL, ESC \ or U+009C; the text between an OSC 8
//     hyperlink's two sequences stays;
//   - the other escape sequences: ESC, intermediates (0x20-0x2F), a final
//     byte (0x30-0x7E), such as ESC ( B or ESC 7;
//   - a lone ESC (at the end, or before a byte no sequence starts with),
//     the other C1 controls (U+0080-U+009F), and a byte C2 that does not
//     start a UTF-8 character (with a byte after a sequence removed, it
//     would make a C1 control).
//
// A sequence cut short ends where the text stops being one: a CSI at its
// first byte outside the CSI ranges, a string at the end of its line (the
// newline stays). Everything else, new lines, tabs and carriage returns
// included, is kept as it is. s without ESC or C1 controls is returned
// unchanged.
func StripANSI(s string) string {
	if !hasEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == esc:
			i = skipEscape(s, i+1)
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			i = skipC1(s, s[i+1], i+2)
		case c == 0xc2 && (i+1 == len(s) || s[i+1] < 0x80 || s[i+1] > 0xbf):
			i++ // not UTF-8, and it could pair with a byte after a removed sequence
		default:
			j := i + 1
			for j < len(s) && s[j] != esc && s[j] != 0xc2 {
				j++
			}
			b.WriteString(s[i:j])
			i = j
		}
	}
	return b.String()
}

// hasEscape reports whether s holds ESC or a C1 control (U+0080-U+009F,
// the bytes C2 80-C2 9F in UTF-8).
func hasEscape(s string) bool {
	if strings.IndexByte(s, esc) >= 0 {
		return true
	}
	for i := strings.IndexByte(s, 0xc2); i >= 0 && i+1 < len(s); {
		if s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return true
		}
		k := strings.IndexByte(s[i+1:], 0xc2)
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// skipEscape returns where the sequence whose ESC ends before i ends.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i // a lone ESC at the end
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f:
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			return j + 1
		}
		return j
	case c >= 0x30 && c <= 0x7e:
		return i + 1
	}
	return i // a lone ESC: the byte after it is text
}

// skipC1 returns where the sequence that the C1 control U+00xx (c, the
// second byte of its UTF-8 form) opens ends, i being just after it.
func skipC1(s string, c byte, i int) int {
	switch c {
	case 0x9b:
		return skipCSI(s, i)
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f:
		return skipString(s, i)
	}
	return i
}

// skipCSI returns where a control sequence whose parameters start at i
// ends: after its final byte, or at the first byte that cannot be part of
// it.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		return i + 1
	}
	return i
}

// skipString returns where a control string (OSC, DCS, …) whose content
// starts at i ends: after BEL, ST (ESC \ or U+009C), or at the end of its
// line, the newline kept.
func skipString(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case 0x07:
			return i + 1
		case '\n':
			return i
		case esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // another sequence starts: this one was cut short
		case 0xc2:
			if i+1 < len(s) && s[i+1] == 0x9c {
				return i + 2
			}
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return i
}
