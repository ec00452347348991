package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Table is text output in aligned columns: each column as wide as its
// widest cell (header included), columns two spaces apart, the last one
// not padded. Right-aligned columns (numbers) are named in Right.
type Table struct {
	Header []string
	Right  map[int]bool // column indexes aligned right
	Indent string       // before every line
	rows   [][]string
}

// Add appends a row (missing cells are empty).
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Write prints the header and the rows, each line cut to width runes (0:
// no limit) with "…" marking a cut.
func (t *Table) Write(w io.Writer, width int) error {
	widths := make([]int, len(t.Header))
	all := append([][]string{t.Header}, t.rows...)
	for _, r := range all {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	for _, r := range all {
		line := t.Indent
		for i := range widths {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case t.Right[i]:
				line += pad + c
			case i == len(widths)-1:
				line += c
			default:
				line += c + pad
			}
			if i < len(widths)-1 {
				line += "  "
			}
		}
		b.WriteString(Cut(strings.TrimRight(line, " "), width) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Cut shortens line to width runes (0: no limit), marking the cut with
// "…".
func Cut(line string, width int) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	r := []rune(line)
	return string(r[:width-1]) + "…"
}
