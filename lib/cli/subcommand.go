package cli

import (
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
)

// Building kong's model reflects over the whole command tree and parses
// every struct tag, help texts included: for iter-log's five subcommands
// about two thirds of its start after the runtime's own. A run
// of one subcommand needs only that subcommand's part of the tree, so
// parseOne builds the model of a struct that holds the command's own flags
// and the subcommand the arguments name, and falls back to the whole
// tree for anything that could show the other subcommands or depends on
// them: help, shell completion, a first argument that is not exactly one
// subcommand's name, a parse error (its message and usage come from the
// whole tree).

// parseOne parses args through the model of the subcommand args[0] names,
// when that model says the same as the whole tree's (see above), and
// returns nil otherwise, cmd then as it was. The fields kong set are in
// cmd afterwards, as when parsing into it.
func parseOne(cmd any, args []string, options []kong.Option) *kong.Context {
	one := selectOne(cmd, args)
	if one == nil {
		return nil
	}
	parser, err := kong.New(one.Interface(), options...)
	if err != nil || len(parser.Model.Children) != 1 || parser.Model.Children[0].Name != args[0] || len(parser.Model.Children[0].Aliases) > 0 {
		return nil
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return nil
	}
	copyBack(reflect.ValueOf(cmd).Elem(), one.Elem())
	return kctx
}

// selectOne returns a new value of a struct type with cmd's fields except
// its subcommands, and the one subcommand args[0] names, its fields set from
// cmd's; nil when args may need more of the tree (see above) or cmd's type
// is not one this applies to (no subcommands, kong tags in the kong:"…"
// form, aliases, unexported fields, an exported method a kong hook could
// be).
func selectOne(cmd any, args []string) *reflect.Value {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil
	}
	for _, a := range args {
		if a == "--help" || strings.HasPrefix(a, "--help=") || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'h') {
			return nil
		}
	}
	v := reflect.ValueOf(cmd)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Type().NumMethod() > 0 {
		return nil
	}
	t := v.Elem().Type()
	var fields []reflect.StructField
	var from []int
	selected := false
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			return nil
		}
		if _, ok := f.Tag.Lookup("kong"); ok {
			return nil
		}
		if _, ok := f.Tag.Lookup("aliases"); ok {
			return nil
		}
		if _, ok := f.Tag.Lookup("cmd"); ok {
			if selected || commandName(f) != args[0] {
				continue
			}
			selected = true
		} else if f.Anonymous {
			// Flattened as kong flattens an embedded struct.
			f.Anonymous = false
			f.Tag = reflect.StructTag(strings.TrimSpace(`embed:"" ` + string(f.Tag)))
		}
		f.Index, f.Offset = nil, 0
		fields = append(fields, f)
		from = append(from, i)
	}
	if !selected {
		return nil
	}
	one := reflect.New(reflect.StructOf(fields))
	for j, i := range from {
		one.Elem().Field(j).Set(v.Elem().Field(i))
	}
	return &one
}

// copyBack sets each field of cmd that one holds to one's value.
func copyBack(cmd, one reflect.Value) {
	for j := 0; j < one.NumField(); j++ {
		cmd.FieldByName(one.Type().Field(j).Name).Set(one.Field(j))
	}
}

// commandName is the name kong gives the subcommand field f: its name tag,
// else its Go name in lower case when that is one word ("Begin" → begin);
// "" for the names kong splits into words (parse then builds the whole
// tree).
func commandName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	for i, r := range f.Name {
		if i > 0 && !('a' <= r && r <= 'z') {
			return ""
		}
	}
	return strings.ToLower(f.Name)
}
