package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The shape the bash scripts of tools/ keep (docs/development.md): the
// porcelain reads as a recipe that composes the commands, and what those
// commands decide reaches it as data it evals, never as text it parses.
//
//  1. Traps are literal: a trap's action is a single-quoted string with no
//     expansion in it, or a function's name; no eval runs a trap.
//  2. No exit-code tables: no case on $? or on a variable that holds an
//     exit status (assigned $?, or copied from one that is), and no case
//     with an arm that is a number.
//  3. A treeloop command's output (a command of cmd/, or "$@", captured by
//     VAR=$(…), held_out VAR or session VAR) is used only as eval "$VAR"
//     or tested empty ([ -z "$VAR" ], [ -n "$VAR" ]); no pipeline carries
//     a treeloop command's output or feeds a text filter (cut, grep, sed,
//     awk, …); nothing is read from a command (read -u on a descriptor a
//     process substitution opened, read < <(…), a here-string of $(…)) but
//     in shapeReads; every eval is such an eval "$VAR".
//  4. No && / || chain of more than one link: a list joins at most two
//     commands with them (a test in [[ ]], words in quotes and the
//     condition of an if, elif, while or until aside).

// shapeReads are the reads of a command's output the scripts still parse,
// by "file: the read's line": each a follow-up, none to be added. An entry
// no script has fails too.
var shapeReads = map[string]string{
	// session reads a command's data descriptor whole (shell assignments,
	// exit=N last), for its caller's one eval.
	`runner-step: IFS= read -r -d '' -u "$fd" text`: "session",
	// The step's lines are relayed as the loop's as they come.
	`runner-loop: IFS= read -r -t "$timeout" -u "$from_step" line`: "the step's lines",
}

// shapeOutputUses are the uses of a command's captured output beyond
// eval, by "file: the line": as shapeReads.
var shapeOutputUses = map[string]string{}

// captureHelpers are the functions that set the variable their first
// argument names to a command's output (printf -v).
var captureHelpers = []string{"held_out", "session"}

// textFilters are commands that parse text when a pipe feeds them.
var textFilters = []string{"cut", "grep", "egrep", "fgrep", "sed", "awk", "gawk", "tr", "head", "tail", "sort", "uniq", "wc", "read", "jq", "xargs", "column", "paste"}

// TestPorcelainShape holds every bash script of tools/ to the shape above.
func TestPorcelainShape(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(), "tools")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	commands := shippedCommands(t)
	usedReads, usedUses := map[string]bool{}, map[string]bool{}
	n := 0
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || e.IsDir() {
			continue
		}
		src := string(data)
		if !strings.HasPrefix(src, "#!/usr/bin/env bash\n") && !strings.Contains(src, "\n# shellcheck shell=bash\n") {
			continue
		}
		n++
		s := newShapeScript(e.Name(), src, commands)
		for _, p := range s.check(usedReads, usedUses) {
			t.Error(p)
		}
	}
	if n < 4 {
		t.Fatalf("only %d bash scripts in tools/", n)
	}
	for k := range shapeReads {
		if !usedReads[k] {
			t.Errorf("shapeReads: no script reads %q now: take it off", k)
		}
	}
	for k := range shapeOutputUses {
		if !usedUses[k] {
			t.Errorf("shapeOutputUses: no script has %q now: take it off", k)
		}
	}
}

// The checker finds what each rule forbids in scripts written for it.
func TestPorcelainShapeCatches(t *testing.T) {
	t.Parallel()
	cmds := []string{"runner-record", "tree-select"}
	tests := []struct{ name, src, want string }{
		{"a trap built at run time", "c=on_int\ntrap \"$c\" INT\n", "trap"},
		{"a trap with an expansion", "trap 'f $x' INT\n", "trap"},
		{"eval of a trap", "s=\"trap f INT\"\neval \"$s\"\n", "eval"},
		{"case on $?", "f\ncase $? in 0) ;; esac\n", "exit-code table"},
		{"case on a copied status", "f\nrc=$?\ncode=\"$rc\"\ncase \"x$code\" in x1) ;; esac\n", "exit-code table"},
		{"a numeric arm", "case $v in\n  130|143) ;;\nesac\n", "exit-code table"},
		{"a digit class arm", "case $v in [05]) ;; esac\n", "exit-code table"},
		{"cut of a command's output", "v=$(tree-select --version | cut -d' ' -f2-)\n", "pipe"},
		{"a command piped on", "runner-record pause | while read -r l; do :; done\n", "pipe"},
		{"parsing a capture", "out=$(runner-record pause)\nuntil=${out#*=}\n", "output"},
		{"parsing a held capture", "held_out out runner-record begin\nrecord=${out#record=}\n", "output"},
		{"a here-string of a command", "read -r a b <<<\"$(runner-record pause)\"\n", "read"},
		{"a read loop on a command", "exec {fd}< <(runner-record pause)\nread -r -u \"$fd\" l\n", "read"},
		{"a substitution in a word", "echo \"v $(tree-select --version)\"\n", "output"},
		{"two links", "[ -n \"$a\" ] || [ -n \"$b\" ] || exit 1\n", "chain"},
		{"a link in a group", "[ -n \"$a\" ] || { [ -n \"$b\" ] && x=1; }\n", "chain"},
		{"a link in a redirected group", "{ a && b; } >&2 || echo no\n", "chain"},
	}
	for _, tt := range tests {
		s := newShapeScript("t", tt.src, cmds)
		got := strings.Join(s.check(map[string]bool{}, map[string]bool{}), "\n")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: want a %q problem, got %q", tt.name, tt.want, got)
		}
	}
	ok := "trap 'on_signal 130 INT' INT\ntrap on_exit EXIT\nheld_out d runner-record decide\nif [ -z \"$d\" ]; then exit 6; fi\neval \"$d\"\n" +
		"case $action in stop) exit 1 ;; esac\nif [ -n \"$a\" ] && [[ $b == x || $c == y ]]; then :; fi\nv=$(id -u)\n"
	if got := newShapeScript("t", ok, cmds).check(map[string]bool{}, map[string]bool{}); len(got) > 0 {
		t.Errorf("a script in shape: %q", got)
	}
}

// shapeScript is one script: raw is its text without comments, masked
// the same with what quotes, [[ ]] and substitutions hold blanked out
// (the same length, lines where they were).
type shapeScript struct {
	name, src, raw, masked string
	commands               []string
}

func newShapeScript(name, src string, commands []string) *shapeScript {
	raw, masked := maskShell(src)
	return &shapeScript{name: name, src: src, raw: raw, masked: masked, commands: commands}
}

// maskShell drops comments and blanks the inside of quotes, $( ), <( ),
// ${ }, $(( )) and [[ ]] (keeping their delimiters and newlines, but ${ }'s
// braces); raw is the text without comments, masked the blanked one; both
// the length of src. A line continued by \ is joined.
func maskShell(src string) (raw, masked string) {
	k := &masker{r: []byte(src), m: []byte(src)}
	for i := 0; i < len(k.r); i++ {
		i = k.step(i)
	}
	return string(k.r), string(k.m)
}

// masker is maskShell's state: the texts and the quotes and substitutions
// open at the offset it is at.
type masker struct {
	r, m  []byte
	stack []byte
}

func (k *masker) top() byte {
	if len(k.stack) == 0 {
		return 0
	}
	return k.stack[len(k.stack)-1]
}

func (k *masker) blank(i int) {
	if k.m[i] != '\n' {
		k.m[i] = ' '
	}
}

func (k *masker) at(i int) byte {
	if i < len(k.r) {
		return k.r[i]
	}
	return 0
}

func (k *masker) push(c byte) { k.stack = append(k.stack, c) }
func (k *masker) pop()        { k.stack = k.stack[:len(k.stack)-1] }

// step handles the byte at i and returns the offset it handled up to.
func (k *masker) step(i int) int {
	c, top := k.r[i], k.top()
	if top == '\'' {
		if c == '\'' {
			k.pop()
		} else {
			k.blank(i)
		}
		return i
	}
	if c == '\\' && i+1 < len(k.r) {
		return k.escape(i)
	}
	if next, ok := k.close(i, c, top); ok {
		return next
	}
	if next, ok := k.open(i, c, top); ok {
		return next
	}
	if len(k.stack) > 0 {
		k.blank(i)
	}
	return i
}

// escape: a backslash and the byte after it; a continued line joined.
func (k *masker) escape(i int) int {
	if k.r[i+1] == '\n' {
		k.r[i], k.r[i+1], k.m[i], k.m[i+1] = ' ', ' ', ' ', ' '
	} else if len(k.stack) > 0 {
		k.blank(i)
		k.blank(i + 1)
	}
	return i + 1
}

// close ends the quote or substitution open at i, if c ends it.
func (k *masker) close(i int, c, top byte) (int, bool) {
	switch {
	case top == '"' && c == '"', top == '(' && c == ')':
	case top == '{' && c == '}':
		k.m[i] = ' ' // ${ }: no brace of a group
	case top == '[' && c == ']' && k.at(i+1) == ']':
		k.pop()
		return i + 1, true
	default:
		return i, false
	}
	k.pop()
	return i, true
}

// open starts a comment, a quote or a substitution at i, if c starts one.
func (k *masker) open(i int, c, top byte) (int, bool) {
	switch {
	case top != '"' && c == '#' && (i == 0 || strings.ContainsRune(" \t\n;(", rune(k.r[i-1]))):
		for ; i < len(k.r) && k.r[i] != '\n'; i++ {
			k.r[i], k.m[i] = ' ', ' '
		}
		return i - 1, true
	case top != '"' && (c == '\'' || c == '"'):
		k.push(c)
	case (c == '$' || c == '<' || c == '>') && k.at(i+1) == '(':
		k.push('(')
		return i + 1, true
	case c == '$' && k.at(i+1) == '{':
		k.push('{')
		k.m[i+1] = ' '
		return i + 1, true
	case len(k.stack) == 0 && c == '[' && k.at(i+1) == '[':
		k.push('[')
		return i + 1, true
	case top == '(' && c == '(':
		k.push('(')
		k.blank(i)
	default:
		return i, false
	}
	return i, true
}

// line is the 1-based line of offset i and its text, trimmed.
func (s *shapeScript) line(i int) (int, string) {
	n := strings.Count(s.src[:i], "\n") + 1
	start := strings.LastIndexByte(s.src[:i], '\n') + 1
	end := strings.IndexByte(s.src[i:], '\n')
	if end < 0 {
		end = len(s.src) - i
	}
	return n, strings.TrimSpace(s.src[start : i+end])
}

func (s *shapeScript) problem(i int, format string, args ...any) string {
	n, text := s.line(i)
	return fmt.Sprintf("tools/%s:%d: %s: %s", s.name, n, fmt.Sprintf(format, args...), text)
}

var (
	wordRE      = regexp.MustCompile(`(?:^|[\s;&|{(!])(trap|eval|case|read)\s`)
	exitAssign  = regexp.MustCompile(`(?:^|[\s;])(?:local\s+(?:\w+(?:=\S*)?\s+)*)?(\w+)=\$\?`)
	copyAssign  = regexp.MustCompile(`(?:^|[\s;])(\w+)="?\$\{?(\w+)\}?"?(?:[\s;]|$)`)
	literalTrap = regexp.MustCompile(`^trap\s+('[^'$` + "`" + `]*'|[A-Za-z_][\w-]*|-)(\s|$)`)
	numericArm  = regexp.MustCompile(`^[0-9\[\]-]*[0-9][0-9\[\]-]*$`)
	captureRE   = regexp.MustCompile(`(?:^|[\s;])(\w+)=\$\(\s*(?:exec\s+|command\s+)?("\$@"|\$@|[\w-]+)`)
	substRE     = regexp.MustCompile(`\$\(\s*(?:exec\s+|command\s+)?("\$@"|\$@|[\w-]+)`)
	okUseRE     = `(?:eval\s+"\$%[1]s"|\[\s+-[zn]\s+"\$%[1]s"\s+\])`
)

// check returns the rules' problems, marking the exemptions used.
func (s *shapeScript) check(usedReads, usedUses map[string]bool) []string {
	var out []string
	out = append(out, s.checkWords()...)
	out = append(out, s.checkCaseArms()...)
	out = append(out, s.checkPipes()...)
	out = append(out, s.checkOutputs(usedUses)...)
	out = append(out, s.checkReads(usedReads)...)
	out = append(out, s.checkChains()...)
	return out
}

// isCommand: word runs a treeloop command (or the command a helper was
// given, "$@").
func (s *shapeScript) isCommand(word string) bool {
	return word == `"$@"` || word == "$@" || slices.Contains(s.commands, word)
}

// exitVars are the variables that hold an exit status.
func (s *shapeScript) exitVars() map[string]bool {
	vars := map[string]bool{}
	for _, m := range exitAssign.FindAllStringSubmatch(s.raw, -1) {
		vars[m[1]] = true
	}
	for grew := true; grew; {
		grew = false
		for _, m := range copyAssign.FindAllStringSubmatch(s.raw, -1) {
			if vars[m[2]] && !vars[m[1]] {
				vars[m[1]], grew = true, true
			}
		}
	}
	return vars
}

// checkWords: rules 1 and 2's case subjects, at every trap, eval and case.
func (s *shapeScript) checkWords() []string {
	var out []string
	exitVars := s.exitVars()
	for _, loc := range wordRE.FindAllStringSubmatchIndex(s.masked, -1) {
		at, word := loc[2], s.masked[loc[2]:loc[3]]
		rest := s.raw[at:]
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[:i]
		}
		switch word {
		case "trap":
			if !literalTrap.MatchString(rest) {
				out = append(out, s.problem(at, "a trap whose action is not a literal"))
			}
		case "eval":
			if !s.okEval(rest) {
				out = append(out, s.problem(at, `an eval of anything but a command's captured output (eval "$VAR")`))
			}
		case "case":
			subject := strings.Fields(rest)[1]
			if strings.Contains(subject, "$?") {
				out = append(out, s.problem(at, "an exit-code table (case on $?)"))
			}
			for v := range exitVars {
				if regexp.MustCompile(`\$\{?` + v + `\b`).MatchString(subject) {
					out = append(out, s.problem(at, "an exit-code table (case on %s, an exit status)", v))
				}
			}
		}
	}
	return out
}

// okEval: the eval is eval "$VAR" of a captured output.
func (s *shapeScript) okEval(rest string) bool {
	m := regexp.MustCompile(`^eval\s+"\$(\w+)"\s*$`).FindStringSubmatch(strings.TrimRight(strings.SplitN(rest, ";", 2)[0], " "))
	return m != nil && s.outputVars()[m[1]]
}

// checkCaseArms: rule 2's numeric arms.
func (s *shapeScript) checkCaseArms() []string {
	var out []string
	for _, loc := range regexp.MustCompile(`(?:^|[\s;])case\s+\S+\s+in\s`).FindAllStringIndex(s.masked, -1) {
		body := s.masked[loc[1]:]
		end := regexp.MustCompile(`(?:^|[\s;])esac(?:[\s;]|$)`).FindStringIndex(body)
		if end == nil {
			continue
		}
		body = body[:end[0]]
		off := loc[1]
		for _, seg := range strings.Split(body, ";;") {
			if m := regexp.MustCompile(`^\s*\(?\s*([^()]*?)\s*\)`).FindStringSubmatchIndex(seg); m != nil {
				label := s.raw[off+m[2] : off+m[3]]
				for _, alt := range strings.Split(label, "|") {
					if numericArm.MatchString(strings.Trim(strings.TrimSpace(alt), `'"`)) {
						out = append(out, s.problem(off+m[2], "an exit-code table (case arm %s)", strings.TrimSpace(alt)))
					}
				}
			}
			off += len(seg) + 2
		}
	}
	return out
}

// caseLabels blanks the arms' labels of every case in text (a | there is
// no pipe).
func caseLabels(text string) string {
	b := []byte(text)
	for _, loc := range regexp.MustCompile(`(?:^|[\s;])case\s+\S+\s+in\s`).FindAllStringIndex(text, -1) {
		body := text[loc[1]:]
		end := regexp.MustCompile(`(?:^|[\s;])esac(?:[\s;]|$)`).FindStringIndex(body)
		if end == nil {
			continue
		}
		off := loc[1]
		for _, seg := range strings.Split(body[:end[0]], ";;") {
			if m := regexp.MustCompile(`^\s*\(?\s*([^()]*?)\s*\)`).FindStringSubmatchIndex(seg); m != nil {
				for i := off + m[2]; i < off+m[3]; i++ {
					b[i] = ' '
				}
			}
			off += len(seg) + 2
		}
	}
	return string(b)
}

// checkPipes: rule 3's pipelines, in the text and in every $( ).
func (s *shapeScript) checkPipes() []string {
	var out []string
	text := caseLabels(s.masked)
	// What the substitutions hold, unmasked but for their quotes.
	for _, loc := range regexp.MustCompile(`\$\(`).FindAllStringIndex(s.raw, -1) {
		inner := s.raw[loc[1]:]
		if i := strings.IndexByte(inner, '\n'); i >= 0 {
			inner = inner[:i]
		}
		_, m := maskShell(inner)
		out = append(out, s.pipes(m, loc[1], inner)...)
	}
	return append(out, s.pipes(text, 0, s.raw)...)
}

func (s *shapeScript) pipes(text string, off int, raw string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '|' || (i+1 < len(text) && (text[i+1] == '|' || text[i+1] == '&')) || (i > 0 && text[i-1] == '|') {
			continue
		}
		next := strings.Fields(raw[i+1:])
		if len(next) > 0 && slices.Contains(textFilters, strings.Trim(next[0], "()")) {
			out = append(out, s.problem(off+i, "a pipe into a text filter (%s)", next[0]))
		}
		start := strings.LastIndexAny(text[:i], ";\n&({") + 1
		if prev := strings.Fields(raw[start:i]); len(prev) > 0 && s.isCommand(prev[0]) {
			out = append(out, s.problem(off+i, "a pipe carrying %s's output", prev[0]))
		}
	}
	return out
}

// outputVars are the variables that hold a treeloop command's output.
func (s *shapeScript) outputVars() map[string]bool {
	vars := map[string]bool{}
	for _, m := range captureRE.FindAllStringSubmatch(s.raw, -1) {
		if s.isCommand(m[2]) {
			vars[m[1]] = true
		}
	}
	for _, h := range captureHelpers {
		re := regexp.MustCompile(`(?:^|[\s;!])` + h + `\s+(\w+)\s+(?:--own-stdout\s+)?("\$@"|[\w-]+)`)
		for _, m := range re.FindAllStringSubmatch(s.raw, -1) {
			if s.isCommand(m[2]) {
				vars[m[1]] = true
			}
		}
	}
	return vars
}

// functionAt is the name of the function whose body holds offset i.
func (s *shapeScript) functionAt(i int) string {
	name := ""
	for _, m := range regexp.MustCompile(`(?m)^([\w-]+)\(\)\s*\{`).FindAllStringSubmatchIndex(s.masked[:i], -1) {
		name = s.masked[m[2]:m[3]]
		if regexp.MustCompile(`(?m)^\}`).MatchString(s.masked[m[1]:i]) {
			name = ""
		}
	}
	return name
}

// checkOutputs: rule 3's captured outputs, used only by eval or an
// emptiness test; no $( ) of a command inside a word.
func (s *shapeScript) checkOutputs(used map[string]bool) []string {
	var out []string
	for v := range s.outputVars() {
		ok := regexp.MustCompile(fmt.Sprintf(okUseRE, v))
		for _, loc := range regexp.MustCompile(`\$\{?`+v+`\b`).FindAllStringIndex(s.raw, -1) {
			from := max(0, loc[0]-40)
			if ok.MatchString(s.raw[from:min(len(s.raw), loc[1]+8)]) {
				continue
			}
			if fn := s.functionAt(loc[0]); slices.Contains(captureHelpers, fn) {
				continue // the helper's own printf -v
			}
			_, text := s.line(loc[0])
			if _, ok := shapeOutputUses[s.name+": "+text]; ok {
				used[s.name+": "+text] = true
				continue
			}
			out = append(out, s.problem(loc[0], "%s holds a command's output: use it only as eval \"$%s\"", v, v))
		}
	}
	for _, loc := range substRE.FindAllStringSubmatchIndex(s.raw, -1) {
		if !s.isCommand(s.raw[loc[2]:loc[3]]) {
			continue
		}
		if captureRE.MatchString(s.raw[max(0, strings.LastIndexAny(s.raw[:loc[0]], " \t\n;")):loc[1]]) {
			continue // VAR=$(cmd): checked as VAR
		}
		out = append(out, s.problem(loc[0], "a command's output inside a word"))
	}
	return out
}

// checkReads: rule 3's reads of a command's output.
func (s *shapeScript) checkReads(used map[string]bool) []string {
	var out []string
	fromCommand := map[string]bool{}
	for _, m := range regexp.MustCompile(`exec\s+\{(\w+)\}<\s*<\(`).FindAllStringSubmatch(s.raw, -1) {
		fromCommand[m[1]] = true
	}
	for _, loc := range regexp.MustCompile(`(?:^|[\s;!&|])read\s[^\n;]*`).FindAllStringIndex(s.masked, -1) {
		stmt := s.raw[loc[0]:loc[1]]
		bad := strings.Contains(stmt, "<<<") && strings.Contains(stmt, "$(") || regexp.MustCompile(`<\s*<\(`).MatchString(stmt)
		if m := regexp.MustCompile(`-u\s+"?\$\{?(\w+)`).FindStringSubmatch(stmt); m != nil && fromCommand[m[1]] {
			bad = true
		}
		if i := strings.LastIndexAny(s.masked[:loc[0]+1], "\n;"); strings.Contains(caseLabels(s.masked)[i+1:loc[0]+1], "|") {
			bad = true // piped into read
		}
		if !bad {
			continue
		}
		_, text := s.line(loc[0] + 1)
		if _, ok := shapeReads[s.name+": "+text]; ok {
			used[s.name+": "+text] = true
			continue
		}
		out = append(out, s.problem(loc[0]+1, "a read of a command's output"))
	}
	return out
}

// checkChains: rule 4, per list (split at ; & newline and the keywords
// outside braces that group commands on one line).
func (s *shapeScript) checkChains() []string {
	text := caseLabels(s.masked)
	// A line that ends with && or || goes on on the next.
	cont := regexp.MustCompile(`(&&|\|\|)\s*\n`)
	text = cont.ReplaceAllStringFunc(text, func(m string) string { return strings.ReplaceAll(m, "\n", " ") })
	c := &chains{s: s, text: text}
	for i := 0; i < len(text); i++ {
		i = c.step(i)
	}
	c.flush(len(text))
	return c.out
}

// chains is checkChains' state. Braces that group commands on one line
// hold one list with the chain around them; a block's (a function's body)
// does not.
type chains struct {
	s                   *shapeScript
	text                string
	brace, start, links int
	inline              []bool
	out                 []string
}

var listWords = regexp.MustCompile(`(?:^|[\s;])(then|do|else|elif)(?:[\s;]|$)`)

// flush ends the list that began at start, the next beginning at i.
func (c *chains) flush(i int) {
	// An if's, elif's, while's or until's condition may join its tests.
	if f := strings.Fields(c.text[c.start:i]); len(f) > 0 && slices.Contains([]string{"if", "elif", "while", "until"}, f[0]) {
		c.links = 0
	}
	if c.links > 1 {
		c.out = append(c.out, c.s.problem(c.start, "a chain of %d && / || links (at most one)", c.links))
	}
	c.start, c.links = i, 0
}

func (c *chains) byteAt(i int) byte {
	if i >= 0 && i < len(c.text) {
		return c.text[i]
	}
	return ' '
}

// step handles the byte at i and returns the offset it handled up to.
func (c *chains) step(i int) int {
	b, next, prev := c.text[i], c.byteAt(i+1), c.byteAt(i-1)
	switch {
	case b == '{' && (next == ' ' || next == '\n'):
		c.openBrace(i)
	case b == '}' && len(c.inline) > 0 && strings.ContainsRune(" ;\n", rune(prev)):
		if c.inline[len(c.inline)-1] {
			c.brace--
		}
		c.inline = c.inline[:len(c.inline)-1]
	case (b == '&' && next == '&') || (b == '|' && next == '|'):
		c.links++
		return i + 1
	case c.brace == 0 && (b == ';' || b == '\n' || (b == '&' && !strings.ContainsRune("<>", rune(prev)) && next != '>')):
		c.flush(i + 1)
	case c.brace == 0 && prev == ' ' && listWords.MatchString(c.text[i:min(len(c.text), i+7)]):
		c.flush(i)
	}
	return i
}

// openBrace: a brace with commands after it on its line groups them;
// one that ends its line opens a block.
func (c *chains) openBrace(i int) {
	rest := c.text[i+1:]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	onLine := strings.TrimSpace(rest) != ""
	c.inline = append(c.inline, onLine)
	if onLine {
		c.brace++
	} else {
		c.flush(i + 1)
	}
}
