package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// node is one JSON Schema (sub)schema, limited to the keywords
// treeloop's schemas use; decoding refuses any other keyword, so a schema
// that grows one fails generation instead of being checked loosely.
type node struct {
	Schema      string           `json:"$schema"`
	ID          string           `json:"$id"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Format      string           `json:"format"`   // an annotation in draft 2020-12
	ReadOnly    bool             `json:"readOnly"` // an annotation: the value's owner (the runner) changes it, no one else
	Ref         string           `json:"$ref"`
	Defs        map[string]*node `json:"$defs"`
	Type        typeList         `json:"type"`
	Enum        []any            `json:"enum"`
	Const       json.RawMessage  `json:"const"`
	Pattern     string           `json:"pattern"`
	MinLength   *int             `json:"minLength"`
	MaxLength   *int             `json:"maxLength"`
	Minimum     *json.Number     `json:"minimum"`
	Maximum     *json.Number     `json:"maximum"`
	MinItems    *int             `json:"minItems"`
	MaxItems    *int             `json:"maxItems"`
	Items       *node            `json:"items"`
	Required    []string         `json:"required"`
	Additional  *additional      `json:"additionalProperties"`
	Properties  properties       `json:"properties"`
	Names       *node            `json:"propertyNames"`
	Not         *node            `json:"not"`
	OneOf       []*node          `json:"oneOf"`
	AllOf       []*node          `json:"allOf"`
	If          *node            `json:"if"`
	Then        *node            `json:"then"`
	Else        *node            `json:"else"`
}

// additional is "additionalProperties": false, true, or the schema of
// the values of the names "properties" does not list.
type additional struct {
	allowed bool
	schema  *node
}

func (a *additional) UnmarshalJSON(b []byte) error {
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return json.Unmarshal(b, &a.allowed)
	}
	a.allowed, a.schema = true, &node{}
	return parseNode(b, a.schema)
}

// closed reports "additionalProperties": false.
func (n *node) closed() bool { return n.Additional != nil && !n.Additional.allowed }

// extra is the schema of the values of names "properties" does not list
// ("additionalProperties" as a schema), nil when there is none.
func (n *node) extra() *node {
	if n.Additional == nil {
		return nil
	}
	return n.Additional.schema
}

// objectKeywords is the first of "propertyNames", "not" and
// "additionalProperties" as a schema that n or a subschema of it (but
// those its $ref names) has, "" for none: the plain check supports them,
// the streaming parser does not.
func (n *node) objectKeywords() string {
	if n == nil {
		return ""
	}
	switch {
	case n.Names != nil:
		return "propertyNames"
	case n.Not != nil:
		return "not"
	case n.extra() != nil:
		return "additionalProperties as a schema"
	}
	subs := []*node{n.Items, n.If, n.Then, n.Else}
	for _, p := range n.Properties {
		subs = append(subs, p.schema)
	}
	subs = append(append(subs, n.OneOf...), n.AllOf...)
	for _, sub := range subs {
		if k := sub.objectKeywords(); k != "" {
			return k
		}
	}
	return ""
}

// constrains reports whether n has a keyword that constrains values
// (any but the annotations, $schema, $id, $defs and $ref).
func (n *node) constrains() bool {
	return len(n.Type) > 0 || len(n.Enum) > 0 || n.Const != nil || n.stringKeywords() ||
		n.Minimum != nil || n.Maximum != nil || n.MinItems != nil || n.MaxItems != nil || n.Items != nil ||
		n.Required != nil || n.Additional != nil || n.Properties != nil || n.Names != nil || n.Not != nil ||
		n.OneOf != nil || n.AllOf != nil || n.If != nil || n.Then != nil || n.Else != nil
}

// stringKeywords reports whether n has a keyword of strings (pattern,
// minLength, maxLength), which apply to string values only when n names
// no type.
func (n *node) stringKeywords() bool {
	return n.Pattern != "" || n.MinLength != nil || n.MaxLength != nil
}

// typeList is "type": one name or a list of them.
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		return json.Unmarshal(b, (*[]string)(t))
	}
	var s string
	err := json.Unmarshal(b, &s)
	*t = typeList{s}
	return err
}

// properties keeps "properties" in the order the schema writes them (the
// canonical key order).
type properties []property

type property struct {
	name   string
	schema *node
}

func (ps *properties) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var n node
		if err := decodeStrict(dec, &n); err != nil {
			return fmt.Errorf("%v: %w", tok, err)
		}
		*ps = append(*ps, property{tok.(string), &n})
	}
	return nil
}

func decodeStrict(dec *json.Decoder, n *node) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	return parseNode(raw, n)
}

// parseNode decodes one schema, refusing keywords node does not know.
func parseNode(raw []byte, n *node) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	d.UseNumber()
	return d.Decode(n)
}

// has reports whether the node's type list names t.
func (n *node) has(t string) bool {
	for _, x := range n.Type {
		if x == t {
			return true
		}
	}
	return false
}

// nullable reports whether null is one of the node's values.
func (n *node) nullable() bool {
	if n.has("null") {
		return true
	}
	for _, v := range n.Enum {
		if v == nil {
			return true
		}
	}
	return false
}

// kind is the one non-null type the node's values have: its "type", else
// what its enum, const or keywords imply ("" for none).
func (n *node) kind() string {
	for _, t := range n.Type {
		if t != "null" {
			return t
		}
	}
	switch {
	case len(n.Enum) > 0 || n.Const != nil:
		return "value"
	case n.Properties != nil || n.Required != nil || n.Names != nil || n.extra() != nil:
		return "object"
	case n.MinItems != nil || n.MaxItems != nil || n.Items != nil:
		return "array"
	}
	return ""
}

// nullBranch splits a oneOf of a schema and {"type": "null"} (in either
// order) into the schema; ok is false for any other oneOf.
func (n *node) nullBranch() (other *node, ok bool) {
	if len(n.OneOf) != 2 {
		return nil, false
	}
	for i, b := range n.OneOf {
		if len(b.Type) == 1 && b.Type[0] == "null" {
			return n.OneOf[1-i], true
		}
	}
	return nil, false
}

// goName is a property name in Go's spelling: max_attempts → MaxAttempts,
// id → ID.
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "id" {
			b.WriteString("ID")
			continue
		}
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
