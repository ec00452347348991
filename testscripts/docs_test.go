package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/config"
)

// The user guide's generated sections: docs/commands.md holds every
// command's and subcommand's --help as the built commands print it, and
// docs/configuration.md the config.toml runner-init writes. Each sits
// between `<!-- NAME: generated from … -->` and `<!-- /NAME -->`;
// UPDATE_DOCS=1 rewrites it, otherwise a difference fails.

// generatedOpen matches the first line of a generated section.
var generatedOpen = regexp.MustCompile(`^<!-- ([a-z-]+): generated from .+ -->$`)

func TestDocsGenerated(t *testing.T) {
	t.Parallel()
	trackSources(t)
	checkGenerated(t, "docs/commands.md", "help", helpMarkdown(t))
	checkGenerated(t, "docs/configuration.md", "config", configMarkdown())
}

// checkGenerated compares the section NAME of the Markdown file (relative
// to the checkout) with want, or rewrites it under UPDATE_DOCS=1.
func checkGenerated(t *testing.T, file, name, want string) {
	t.Helper()
	path := filepath.Join(repoRoot(), file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	openRe := regexp.MustCompile(`(?m)^<!-- ` + name + `: generated from .+ -->\n`)
	loc := openRe.FindStringIndex(text)
	end := strings.Index(text, "<!-- /"+name+" -->")
	if loc == nil || end < loc[1] {
		t.Fatalf("%s has no generated section %q", file, name)
	}
	if got := text[loc[1]:end]; got != want {
		if os.Getenv("UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, []byte(text[:loc[1]]+want+text[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s: the generated section %q differs from what the code gives (UPDATE_DOCS=1 go test ./testscripts -run TestDocsGenerated rewrites it):\n%s",
			file, name, firstDiff(got, want))
	}
}

// firstDiff shows the first line where got and want part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  have %q\n  want %q", i+1, gl, wl)
		}
	}
	return ""
}

// helpMarkdown is every shipped command's --help, its subcommands' after
// it, then the porcelain's: a heading and a text block each.
func helpMarkdown(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, name := range append(plumbing(t), porcelain...) {
		help := helpOutput(t, name)
		writeHelp(&b, name, help)
		for _, sub := range subcommands(help) {
			writeHelp(&b, name+" "+sub, helpOutput(t, name, sub))
		}
	}
	return b.String() + "\n"
}

func writeHelp(b *strings.Builder, what, help string) {
	fmt.Fprintf(b, "\n### `%s`\n\n```text\n%s\n```\n", what, strings.TrimRight(help, "\n"))
}

// helpOutput is `name args... --help` on an 80-column terminal, in an
// environment of its own so that nothing of the caller's shows.
func helpOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, append(args, "--help")...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "COLUMNS=80", "LC_ALL=C", "NO_COLOR=1"}
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s --help: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// configMarkdown is the config.toml runner-init writes, as a TOML block
// marked for the testscript that compares it with the built runner-init's.
func configMarkdown() string {
	return "\n<!-- test: docs-configuration -->\n```toml\n" + string(config.DefaultTOML()) + "```\n\n"
}

// TestConfigurationTableMatchesTemplate: the keys table of
// docs/configuration.md has a row for every key of the config.toml
// runner-init writes, and no row for a key it does not have.
func TestConfigurationTableMatchesTemplate(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := toml.Unmarshal(config.DefaultTOML(), &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k, v := range doc {
		if table, ok := v.(map[string]any); ok {
			for kk := range table {
				want = append(want, "["+k+"] "+kk)
			}
			continue
		}
		want = append(want, k)
	}
	sort.Strings(want)
	data, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := tableKeys(string(data))
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("docs/configuration.md's keys table has no row for %s", k)
		}
	}
	for _, k := range got {
		if !slices.Contains(want, k) {
			t.Errorf("docs/configuration.md's keys table has a row for %s, which config.toml does not have", k)
		}
	}
}

// tableKeys reads the first cell of each row of the table headed
// "| key | default | meaning |": "`[agent] bin`, `model`" gives
// "[agent] bin" and "[agent] model".
func tableKeys(doc string) []string {
	_, table, ok := strings.Cut(doc, "| key | default | meaning |\n| --- | --- | --- |\n")
	if !ok {
		return nil
	}
	var keys []string
	for _, row := range strings.Split(table, "\n") {
		if !strings.HasPrefix(row, "| ") {
			break
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " |")
		section := ""
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
			k := m[1]
			if s, rest, ok := strings.Cut(k, "] "); ok && strings.HasPrefix(s, "[") {
				section, k = s+"] ", rest
			}
			keys = append(keys, section+k)
		}
	}
	return keys
}

// TestMarkdownLinks: every relative link of README.md and docs/**/*.md
// names a file of the checkout, and every #anchor a heading of the file
// it points into.
func TestMarkdownLinks(t *testing.T) {
	t.Parallel()
	root := repoRoot()
	anchors := map[string][]string{}
	anchorsOf := func(file string) []string {
		if a, ok := anchors[file]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = headingAnchors(string(data))
		return anchors[file]
	}
	checked := 0
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(data)) {
			checked++
			target, anchor, _ := strings.Cut(l.target, "#")
			dest := file
			if target != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), target))
				if strings.HasPrefix(dest, "../") {
					t.Errorf("%s:%d: %s leaves the checkout", file, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s:%d: %s: no such file", file, l.line, l.target)
					continue
				}
			}
			if anchor != "" {
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: %s: an anchor into a file that is not Markdown", file, l.line, l.target)
				} else if !slices.Contains(anchorsOf(dest), anchor) {
					t.Errorf("%s:%d: %s: %s has no heading #%s", file, l.line, l.target, dest, anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found: the walk reads none", checked)
	}
}

// link is a relative link of a Markdown file and its line.
type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// markdownLinks returns the relative link targets of a Markdown text
// (inline links and images), outside code blocks and code spans;
// http(s) and mailto links are left out.
func markdownLinks(text string) []link {
	var out []link
	for _, l := range proseLines(text) {
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
			if t := m[1]; !strings.Contains(t, "://") && !strings.HasPrefix(t, "mailto:") {
				out = append(out, link{t, l.n})
			}
		}
	}
	return out
}

// textLine is a line of a Markdown file and its number, from 1.
type textLine struct {
	text string
	n    int
}

// proseLines returns the lines of a Markdown text outside its fenced code
// blocks, each with its number.
func proseLines(text string) []textLine {
	var out []textLine
	fence := ""
	for i, l := range strings.Split(text, "\n") {
		if fence != "" {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(l); m != nil {
			fence = m[2]
			continue
		}
		out = append(out, textLine{l, i + 1})
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a Markdown text's
// headings: lower case, punctuation but - and _ dropped, spaces as -, a
// repeated one suffixed -1, -2, ….
func headingAnchors(text string) []string {
	var out []string
	seen := map[string]int{}
	for _, pl := range proseLines(text) {
		l := pl.text
		h := strings.TrimLeft(l, "#")
		if len(h) == len(l) || len(l)-len(h) > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}
