package tree

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
)

// Parse decodes data strictly (jsonstrict) and validates it against the
// embedded task tree schema. It returns the tree, or nil and every problem
// (layers json or schema). It does not check invariants. A document the
// streaming check (fastParse) accepts skips the generic path.
//
// In a program that does not link the full validator (lib/schema/full),
// a document the fast path refuses gets one problem: jsonstrict's
// error when it is not JSON, else the first problem the fast path met,
// (the callers point to tree-validate for the full list).
func Parse(data []byte) (*Node, Problems) {
	root, why := fastParseWhy(data)
	if why == "" {
		return root, nil
	}
	if !schema.Linked() {
		if _, err := jsonstrict.Decode(data); err != nil {
			return nil, Problems{{Layer: LayerJSON, Message: err.Error()}}
		}
		return nil, Problems{{Layer: LayerSchema, Message: why}}
	}
	return parseFull(data)
}

// parseFull is Parse through jsonstrict and the JSON Schema validator.
func parseFull(data []byte) (*Node, Problems) {
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return nil, Problems{{Layer: LayerJSON, Message: err.Error()}}
	}
	if vs, _ := schema.Words(schema.TaskTree, v); len(vs) > 0 {
		return nil, schemaProblems(v, vs)
	}
	return build(v.(map[string]any)), nil
}

// schemaProblems are the validator's violations vs of the document v, each
// at its node's path.
func schemaProblems(v any, vs []schema.Violation) Problems {
	ps := make(Problems, 0, len(vs))
	for _, x := range vs {
		path, field := locate(v, x.Pointer)
		msg := x.Message
		if field != "" {
			msg = field + ": " + msg
		}
		ps = append(ps, Problem{Layer: LayerSchema, Path: path, Message: msg})
	}
	return ps.Sorted()
}

// LoadEdited is Load for a tree a session edited, whose problems the next
// session reads: in a program that does not link the full validator, a
// document the fast path refuses as JSON that the schema rejects gets
// every schema problem as the validator words them, by its helper
// (schema.WordsOrHelper), where Load gives the first the fast path met.
// Otherwise, and when the helper cannot word it, it is Load.
func LoadEdited(data []byte) (*Node, Problems) {
	root, ps := Load(data)
	if root != nil || schema.Linked() || len(ps) != 1 || ps[0].Layer != LayerSchema {
		return root, ps
	}
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return nil, ps
	}
	if vs, ok := schema.WordsOrHelper(schema.TaskTree, v); ok && len(vs) > 0 {
		return nil, schemaProblems(v, vs)
	}
	return nil, ps
}

// Load is Parse followed by Check: the tree and all problems, sorted. The
// tree is nil when the document does not satisfy the schema. With
// ShareLoads on, a document equal to the last one loaded is not parsed
// again (shared.go); the tree returned is the caller's own either way.
func Load(data []byte) (*Node, Problems) {
	if sharing.Load() {
		return sharedLoadOf(data)
	}
	return loadDocument(data)
}

// loadDocument is Load without shared loads.
func loadDocument(data []byte) (*Node, Problems) {
	root, ps := Parse(data)
	if ps != nil {
		return nil, ps
	}
	return root, Check(root)
}

// build converts a schema-valid document into nodes.
func build(m map[string]any) *Node {
	n := &Node{
		ID:          m["id"].(string),
		Order:       int64(m["order"].(float64)),
		Title:       m["title"].(string),
		Goal:        m["goal"].(string),
		Next:        m["next"].(string),
		Passes:      m["passes"].(bool),
		Attempts:    int(m["attempts"].(float64)),
		MaxAttempts: int(m["max_attempts"].(float64)),
	}
	acc := m["acceptance"].([]any)
	n.Acceptance = make([]string, len(acc))
	for i, a := range acc {
		n.Acceptance[i] = a.(string)
	}
	if e, ok := m["evidence"].(string); ok {
		n.Evidence = e
	}
	if b, ok := m["sent_back"].(bool); ok {
		n.SentBack = b
	}
	if w, ok := m["waiting"].(string); ok {
		n.Waiting = w
	}
	if as, ok := m["answers"].([]any); ok && len(as) > 0 {
		n.Answers = make([]Answer, len(as))
		for i, a := range as {
			am := a.(map[string]any)
			n.Answers[i] = Answer{Question: am["question"].(string), Answer: am["answer"].(string)}
		}
	}
	kids := m["children"].([]any)
	n.Children = make([]*Node, len(kids))
	for i, k := range kids {
		n.Children[i] = build(k.(map[string]any))
	}
	return n
}

// locate turns a JSON pointer into the node path of the deepest node on it
// and the rest of the pointer (the field), e.g. "/children/1/attempts" →
// ("root/b", "attempts"). Ids that do not match IDPattern appear as
// "children[i]" so a path never carries hostile text.
func locate(doc any, pointer string) (path, field string) {
	toks := schema.Pointer(pointer)
	cur, ok := doc.(map[string]any)
	if !ok {
		return "", strings.Join(toks, "/")
	}
	parts := []string{label(cur, "root")}
	i := 0
	for i+1 < len(toks) && toks[i] == "children" {
		kids, ok := cur["children"].([]any)
		if !ok {
			break
		}
		idx, err := strconv.Atoi(toks[i+1])
		if err != nil || idx < 0 || idx >= len(kids) {
			break
		}
		child, ok := kids[idx].(map[string]any)
		if !ok {
			parts = append(parts, fmt.Sprintf("children[%d]", idx))
			i += 2
			cur = nil
			break
		}
		parts = append(parts, label(child, fmt.Sprintf("children[%d]", idx)))
		cur = child
		i += 2
	}
	return strings.Join(parts, "/"), strings.Join(toks[i:], "/")
}

func label(m map[string]any, fallback string) string {
	if id, ok := m["id"].(string); ok && ValidID(id) {
		return id
	}
	return fallback
}
