package plan

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// lineAt is the 1-based line of byte offset i in data.
func lineAt(data []byte, i int) int {
	if i < 0 || i > len(data) {
		return 1
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// parsePRD reads ralph's prd.json: {"project", "description",
// "userStories": [{"id", "title", "description", "acceptanceCriteria",
// "priority", "passes", "notes"}]}. Stories become the root's children in
// priority order (lower first; without one, after those with one, in
// file order); a story that passes is an assumption; a story without a
// title is rejected with its line. Keys it does not know are ignored.
func parsePRD(data []byte, title string) (Plan, error) {
	if !gjson.ValidBytes(data) {
		return Plan{}, errors.New("the prd.json is not valid JSON")
	}
	doc := gjson.ParseBytes(data)
	stories := doc.Get("userStories")
	if !stories.IsArray() {
		return Plan{}, errors.New(`the prd.json has no "userStories" array`)
	}
	p := Plan{}
	root := &Item{Title: title, Line: 1}
	for _, k := range []string{"project", "projectName", "feature"} {
		if v := doc.Get(k); v.Type == gjson.String && strings.TrimSpace(v.Str) != "" {
			root.Title = cleanText(v.Str)
			break
		}
	}
	root.Goal = strings.TrimSpace(doc.Get("description").String())
	if b := doc.Get("branchName").String(); b != "" {
		root.Goal = joinText(root.Goal, "Branch named in the plan: "+b)
	}
	type story struct {
		item     *Item
		priority float64
		has      bool
	}
	var all []story
	for _, s := range stories.Array() {
		line := lineAt(data, s.Index)
		t := strings.TrimSpace(s.Get("title").String())
		if !s.IsObject() || t == "" {
			p.reject(line, strings.TrimSpace(s.Raw), "a story without a title")
			continue
		}
		if id := strings.TrimSpace(s.Get("id").String()); id != "" {
			t = id + ": " + t
		}
		it := &Item{Title: cleanText(t), Goal: joinText(s.Get("description").String(), notes(s)), Line: line}
		for _, a := range s.Get("acceptanceCriteria").Array() {
			if c := cleanText(a.String()); c != "" {
				it.Acceptance = append(it.Acceptance, c)
			}
		}
		if s.Get("passes").Bool() {
			it.Checked = true
			p.assume(it)
		}
		pr := s.Get("priority")
		all = append(all, story{it, pr.Float(), pr.Type == gjson.Number})
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.has != b.has {
			return a.has
		}
		return a.has && a.priority < b.priority
	})
	for _, s := range all {
		root.Children = append(root.Children, s.item)
	}
	p.Root = root
	return p, nil
}

// notes is a story's notes and dependencies, as goal text.
func notes(s gjson.Result) string {
	var parts []string
	if n := strings.TrimSpace(s.Get("notes").String()); n != "" {
		parts = append(parts, "Notes: "+n)
	}
	var deps []string
	for _, d := range s.Get("dependencies").Array() {
		deps = append(deps, d.String())
	}
	if len(deps) > 0 {
		parts = append(parts, "Depends on: "+strings.Join(deps, ", "))
	}
	return strings.Join(parts, "\n\n")
}

// parseIssue reads a GitHub issue's JSON (gh issue view --json
// title,body[,number]): the title is the root's, the body is read as
// Markdown under it (line numbers are the body's).
func parseIssue(data []byte) (Plan, error) {
	if !gjson.ValidBytes(data) {
		return Plan{}, errors.New("the issue is not valid JSON")
	}
	doc := gjson.ParseBytes(data)
	title := strings.TrimSpace(doc.Get("title").String())
	if title == "" {
		return Plan{}, errors.New(`the issue has no "title"`)
	}
	if n := doc.Get("number"); n.Type == gjson.Number {
		title = fmt.Sprintf("#%d %s", n.Int(), title)
	}
	body := doc.Get("body").String()
	p := parseMarkdown("# "+strings.ReplaceAll(title, "\n", " ")+"\n"+demote(body), title, -1)
	return p, nil
}

// demote pushes every heading of an issue body one level down, under the
// issue's title (a "# " in the body is a section of the issue, not a
// second root). Fenced blocks are left as they are.
func demote(body string) string {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	fence := false
	for i, l := range lines {
		if fenceRE().MatchString(l) {
			fence = !fence
			continue
		}
		if !fence && headingRE().MatchString(l) && !strings.HasPrefix(l, "######") {
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "\n")
}
