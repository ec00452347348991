package proc

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Cause is the lines of a failed program's output that say why it failed,
// for a one-line message: the lines that name an error (an "Error:", "not
// found", "No such file or directory", "cannot", …), in their order, at
// most maxCauseLines of them, each at most maxCauseRunes long; without
// such a line, the last line that is not noise. Noise is what only
// surrounds a cause: a stack frame, a source excerpt and its caret, a
// runtime's version line (node's "Node.js v20"), a traceback's header.
// Terminal colour sequences and carriage returns are dropped. Nil for an
// output with nothing but blanks.
func Cause(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(ansiSeq().ReplaceAllString(string(out), ""), "\n") {
		l = strings.TrimRight(strings.ReplaceAll(l, "\r", ""), " \t")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	var picked []string
	add := func(l string) {
		l = clip(strings.TrimSpace(l))
		for _, p := range picked {
			if p == l {
				return
			}
		}
		picked = append(picked, l)
	}
	// Unindented lines first: an indented one is a frame, an excerpt or
	// a detail of the line above it.
	for _, indented := range []bool{false, true} {
		for _, l := range lines {
			if len(picked) == maxCauseLines {
				break
			}
			if isIndented(l) == indented && !isNoise(l) && causeWords().MatchString(l) {
				add(l)
			}
		}
		if len(picked) > 0 {
			return picked
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if !isNoise(lines[i]) {
			add(lines[i])
			return picked
		}
	}
	if len(lines) > 0 {
		add(lines[len(lines)-1])
	}
	return picked
}

// CauseLine is Cause joined into one line ("; " between its lines); ""
// for an output with nothing but blanks.
func CauseLine(out []byte) string { return strings.Join(Cause(out), "; ") }

const (
	maxCauseLines = 3
	maxCauseRunes = 300
)

// clip cuts l to maxCauseRunes runes, marking the cut.
func clip(l string) string {
	if utf8.RuneCountInString(l) <= maxCauseRunes {
		return l
	}
	return string([]rune(l)[:maxCauseRunes]) + "…"
}

func isIndented(l string) bool { return l[0] == ' ' || l[0] == '\t' }

// isNoise reports whether l only surrounds a cause (see Cause).
func isNoise(l string) bool { return noise().MatchString(l) }

var (
	// ansiSeq matches terminal control sequences (CSI: colours, cursor
	// moves) and OSC sequences (titles, links).
	ansiSeq = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)")
	})
	causeWords = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)error|\bcannot\b|can't|could not|couldn't|not found|no such|denied|not permitted|\bfailed\b|\bfatal\b|\bmissing\b|\bunable\b|\binvalid\b|\brefused\b|not installed|exception|\bpanic\b|\billegal\b|\bunknown\b`)
	})
	noise = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(strings.Join([]string{
			`^\s+at \S`,                            // a JavaScript or Java stack frame
			`^\s*\^[\^~ ]*$`,                       // a caret under an excerpt
			`^\s*throw\b`,                          // node's excerpt of the throwing line
			`^(?:node:|file://)\S*:\d+$`,           // node's location of the throw
			`^Node\.js v\d`,                        // node's version, after every crash
			`^Traceback \(most recent call last\)`, // Python's traceback header
			`^\s+File "`,                           // a Python frame
			`^Require stack:$`, `^- /`,             // node's require stack
			`^\s*(?:code|requireStack):`, `^[{}\]]$`,
		}, "|"))
	})
)
