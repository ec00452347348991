// Package textclean makes text a program printed fit for a person to read
// outside a terminal: the prompt pack, iter-log show, the PR body, the UI and
// notifications quote a guard's or an agent's output, and the escape
// sequences a terminal would have interpreted (colours, cursor moves, window
// titles, hyperlinks) would otherwise reach them as noise. The raw logs keep
// what was written; only what is shown is cleaned.
package textclean

const (
	esc = 0x1b
	bel = 0x07
	del = 0x7f
	// c1Lead is the first byte of the UTF-8 encoding of U+0080..U+00BF; a
	// second byte in 0x80..0x9F makes it a C1 control (U+0080..U+009F).
	c1Lead = 0xc2
)

// StripANSI returns s without its terminal escape sequences and control
// characters (ECMA-48), keeping every other byte as it was:
//
//   - CSI sequences, ESC [ parameters intermediates final, private modes
//     (ESC [ ? 25 l) included;
//   - control strings, OSC (ESC ]) and DCS, SOS, PM, APC (ESC P, X, ^, _),
//     ended by BEL or ST (ESC \); one left open ends before the next line
//     break, which is kept, so an unterminated string never swallows the
//     lines after it;
//   - two-byte sequences (ESC 7, ESC c, ESC =) and character set
//     designations (ESC ( B);
//   - a lone ESC, one followed by nothing a sequence can start with;
//   - the C1 controls U+0080..U+009F, read as their ESC equivalents
//     (U+009B as CSI, U+009D as OSC, ...);
//   - every other C0 control and DEL. Line feed, carriage return (CRLF line
//     ends and progress lines) and tab stay.
//
// Bytes that are not valid UTF-8 are kept as they are, but for a stray
// 0xC2 that what was dropped after it would join to a byte 0x80..0x9F (a
// C1 control): both go. s is returned itself,
// without a copy, when it holds nothing to strip.
func StripANSI(s string) string {
	i := firstUnclean(s)
	if i < 0 {
		return s
	}
	b := make([]byte, i, len(s))
	copy(b, s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == esc:
			i = skipEscape(s, i+1)
		case isC1(s, i):
			i = skipSequence(s, s[i+1]-0x40, i+2)
		case dropped(c):
			i++
		case c >= 0x80 && c <= 0x9f && len(b) > 0 && b[len(b)-1] == c1Lead:
			// What was dropped between a stray lead byte and this one
			// would join them into a C1 control: drop both.
			b = b[:len(b)-1]
			i++
		default:
			b = append(b, c)
			i++
		}
	}
	return string(b)
}

// firstUnclean is the index of the first byte StripANSI would change, or -1.
func firstUnclean(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == esc || dropped(c) || isC1(s, i) {
			return i
		}
	}
	return -1
}

// dropped says whether c is a control character that is not kept (every C0
// control but LF, CR and tab, and DEL).
func dropped(c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == del
}

// isC1 says whether s[i:] starts with a C1 control encoded in UTF-8.
func isC1(s string, i int) bool {
	return s[i] == c1Lead && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f
}

// skipEscape returns the index after the sequence an ESC at j-1 starts; a
// lone ESC is dropped by itself.
func skipEscape(s string, j int) int {
	if j >= len(s) || s[j] < 0x20 || s[j] > 0x7e {
		return j
	}
	return skipSequence(s, s[j], j+1)
}

// skipSequence returns the index after an escape sequence whose byte after
// ESC is kind and whose body starts at j.
func skipSequence(s string, kind byte, j int) int {
	switch {
	case kind == '[':
		return skipCSI(s, j)
	case kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_':
		return skipControlString(s, j)
	case kind >= 0x20 && kind <= 0x2f:
		// nF: more intermediates, then one final byte.
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j
	default:
		// A two-byte sequence (Fp, Fe, Fs) or a C1 control with no body.
		return j
	}
}

// skipCSI returns the index after a CSI body starting at j: parameter bytes
// (0x30..0x3F, private markers included), intermediate bytes (0x20..0x2F)
// and one final byte (0x40..0x7E). A byte outside them ends the sequence
// there and is read as text again.
func skipCSI(s string, j int) int {
	for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
		j++
	}
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
		j++
	}
	return j
}

// skipControlString returns the index after a control string starting at
// j: up to and including BEL or ST (ESC \ or U+009C); any other ESC ends it
// and starts a sequence of its own; an open string ends before a line break.
func skipControlString(s string, j int) int {
	for j < len(s) {
		switch c := s[j]; {
		case c == bel:
			return j + 1
		case c == esc:
			if j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
			return j
		case c == '\n' || c == '\r':
			return j
		case c == c1Lead && j+1 < len(s) && s[j+1] == 0x9c:
			return j + 2
		}
		j++
	}
	return j
}
