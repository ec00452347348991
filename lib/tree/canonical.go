package tree

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Less orders siblings by (order ASC, id ASC), the tie-break of seed 000 §4.2.
func Less(a, b *Node) bool { return compare(a, b) < 0 }

func compare(a, b *Node) int {
	if c := cmp.Compare(a.Order, b.Order); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Sort sorts every children array in the tree by (order, id), in place.
func Sort(n *Node) {
	slices.SortStableFunc(n.Children, compare)
	for _, c := range n.Children {
		Sort(c)
	}
}

// normalize makes nil slices empty so they encode as [] rather than null.
func normalize(n *Node) {
	if n.Acceptance == nil {
		n.Acceptance = []string{}
	}
	if n.Children == nil {
		n.Children = []*Node{}
	}
	for _, c := range n.Children {
		normalize(c)
	}
}

// Encode returns the canonical bytes of the tree (DESIGN.md decision 9):
// children sorted by (order, id), keys in schema order, 2-space indent, no
// HTML escaping, a trailing newline. It sorts and normalizes n in place.
// The bytes are those of the one JSON writer, jsondoc.Marshal
// (encoding/json, SetEscapeHTML(false), SetIndent("", "  ")), written by
// hand for speed (bench/fastpaths.md): FuzzEncodeMatchesEncodingJSON and
// TestEncodeEscapesAsJSONDoc hold the two together.
func Encode(n *Node) []byte {
	Sort(n)
	normalize(n)
	buf := make([]byte, 0, encodedSize(n, 0))
	buf = appendNode(buf, n, 0)
	return append(buf, '\n')
}

// encodedSize estimates the encoding's length, for one allocation.
func encodedSize(n *Node, indent int) int {
	size := 200 + 11*indent + len(n.ID) + len(n.Title) + len(n.Goal) + len(n.Waiting)
	for _, a := range n.Answers {
		size += len(a.Question) + len(a.Answer) + 4*indent + 40
	}
	for _, a := range n.Acceptance {
		size += len(a) + indent + 8
	}
	for _, c := range n.Children {
		size += encodedSize(c, indent+4)
	}
	return size
}

// appendNode appends n's object, its opening brace where buf ends and its
// fields indented by indent+2 spaces.
func appendNode(buf []byte, n *Node, indent int) []byte {
	in := indent + 2
	buf = append(buf, '{')
	buf = appendKey(buf, in, "id")
	buf = appendString(buf, n.ID)
	buf = appendKey(buf, in, "order")
	buf = strconv.AppendInt(buf, n.Order, 10)
	buf = appendKey(buf, in, "title")
	buf = appendString(buf, n.Title)
	buf = appendKey(buf, in, "goal")
	buf = appendString(buf, n.Goal)
	buf = appendKey(buf, in, "acceptance")
	buf = appendArray(buf, n.Acceptance, in, func(buf []byte, a string, _ int) []byte { return appendString(buf, a) })
	buf = appendKey(buf, in, "next")
	buf = appendString(buf, n.Next)
	buf = appendKey(buf, in, "passes")
	buf = strconv.AppendBool(buf, n.Passes)
	buf = appendKey(buf, in, "attempts")
	buf = strconv.AppendInt(buf, int64(n.Attempts), 10)
	buf = appendKey(buf, in, "max_attempts")
	buf = strconv.AppendInt(buf, int64(n.MaxAttempts), 10)
	if n.Evidence != "" {
		buf = appendKey(buf, in, "evidence")
		buf = appendString(buf, n.Evidence)
	}
	if n.SentBack {
		buf = appendKey(buf, in, "sent_back")
		buf = append(buf, "true"...)
	}
	if n.Waiting != "" {
		buf = appendKey(buf, in, "waiting")
		buf = appendString(buf, n.Waiting)
	}
	if len(n.Answers) > 0 {
		buf = appendKey(buf, in, "answers")
		buf = appendArray(buf, n.Answers, in, appendAnswer)
	}
	buf = appendKey(buf, in, "children")
	buf = appendArray(buf, n.Children, in, appendNode)
	buf = appendIndent(buf, indent)
	return append(buf, '}')
}

// appendAnswer appends one answer's object, its fields indented by
// indent+2 spaces.
func appendAnswer(buf []byte, a Answer, indent int) []byte {
	buf = append(buf, '{')
	buf = appendKey(buf, indent+2, "question")
	buf = appendString(buf, a.Question)
	buf = appendKey(buf, indent+2, "answer")
	buf = appendString(buf, a.Answer)
	buf = appendIndent(buf, indent)
	return append(buf, '}')
}

// appendArray appends items as an array whose elements are indented by
// indent+2 spaces ([] when empty), each written by each.
func appendArray[T any](buf []byte, items []T, indent int, each func([]byte, T, int) []byte) []byte {
	if len(items) == 0 {
		return append(buf, "[]"...)
	}
	buf = append(buf, '[')
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendIndent(buf, indent+2)
		buf = each(buf, it, indent+2)
	}
	buf = appendIndent(buf, indent)
	return append(buf, ']')
}

// appendKey appends a field's name on its own line: the comma that ends
// the previous field (none after the opening brace), the newline, the
// indent, the quoted key (a plain ASCII name) and ": ".
func appendKey(buf []byte, indent int, key string) []byte {
	if buf[len(buf)-1] != '{' {
		buf = append(buf, ',')
	}
	buf = appendIndent(buf, indent)
	buf = append(buf, '"')
	buf = append(buf, key...)
	return append(buf, '"', ':', ' ')
}

const spaces = "                                                                "

func appendIndent(buf []byte, indent int) []byte {
	buf = append(buf, '\n')
	for indent > len(spaces) {
		buf = append(buf, spaces...)
		indent -= len(spaces)
	}
	return append(buf, spaces[:indent]...)
}

// appendString appends s quoted as encoding/json does without HTML
// escaping: \" \\ \b \f \n \r \t, other control bytes as \u00xx,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '\\', '"':
				buf = append(buf, '\\', b)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// IsCanonical reports whether data is exactly the canonical encoding of root.
func IsCanonical(data []byte, root *Node) bool {
	return bytes.Equal(data, Encode(root.Clone()))
}
