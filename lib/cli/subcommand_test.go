package cli_test

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/command/loopcommit"
	"github.com/treeloop/treeloop/lib/command/runnerrecord"
	"github.com/treeloop/treeloop/lib/command/runnerworktree"
	"github.com/treeloop/treeloop/lib/command/treeedit"
)

// A made-up tool with what the real ones use: the embedded -C flag, a
// default subcommand taking arguments, required and repeated flags,
// positional arguments, flags of the same name in two subcommands, and a
// subcommand whose Go name kong splits into words.
type toolOptions struct {
	cli.Chdir
	Open   openCmd   `cmd:"" help:"Open."`
	Close  closeCmd  `cmd:"" default:"withargs" help:"Close, the default."`
	ReadIt readItCmd `cmd:"" help:"Read."`
	Named  openCmd   `cmd:"" name:"other" help:"Open, by another name."`
}

type openCmd struct {
	Node  string   `required:"" help:"The node."`
	Tags  []string `name:"tag" help:"Tags."`
	Count int      `default:"3" help:"How many."`
	Files []string `arg:"" optional:"" help:"Files."`
}

type closeCmd struct {
	Node   string `help:"The node."`
	Reason string `arg:"" optional:"" help:"Why."`
}

type readItCmd struct {
	JSON bool `name:"json" help:"JSON."`
}

func (*openCmd) Run(*cli.Env) error   { return nil }
func (*closeCmd) Run(*cli.Env) error  { return nil }
func (*readItCmd) Run(*cli.Env) error { return nil }

func options() []kong.Option {
	return []kong.Option{kong.Name("tool"), kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) { panic("exit") }), kong.Bind(&cli.Env{})}
}

// parseWhole parses args into cmd through the whole tree and returns the
// command kong selected ("error", or "exit" for help) and the value of the
// selected subcommand.
func parseWhole(cmd any, args []string) (selected string, sub any) {
	defer func() {
		if r := recover(); r != nil {
			selected = "exit"
		}
	}()
	p, err := kong.New(cmd, options()...)
	if err != nil {
		return "error", nil
	}
	kctx, err := p.Parse(args)
	if err != nil {
		return "error", nil
	}
	return kctx.Command(), kctx.Selected().Target.Interface()
}

// same parses args into a fresh value of typ through the whole tree and
// through ParseOne, and returns "" when they agree (ParseOne declining is
// agreeing: Run then parses the whole tree), else what differs; took
// reports whether ParseOne parsed it.
func same(typ reflect.Type, args []string) (diff string, took bool) {
	full := reflect.New(typ)
	want, wantSub := parseWhole(full.Interface(), args)
	one := reflect.New(typ)
	kctx := cli.ParseOne(one.Interface(), args, options())
	if kctx == nil {
		return "", false
	}
	if kctx.Command() != want {
		return fmt.Sprintf("command %q, the whole tree gives %q", kctx.Command(), want), true
	}
	// The selected subcommand as kong set it (the others are never read),
	// and the root's own fields, copied back into the command's value.
	if sub := kctx.Selected().Target.Interface(); !reflect.DeepEqual(sub, wantSub) {
		return fmt.Sprintf("%s = %#v, the whole tree gives %#v", want, sub, wantSub), true
	}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd {
			continue
		}
		if a, b := full.Elem().Field(i).Interface(), one.Elem().Field(i).Interface(); !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("field %s = %#v, the whole tree gives %#v", f.Name, b, a), true
		}
	}
	return "", true
}

func TestParseOneAsTheWholeTree(t *testing.T) {
	typ := reflect.TypeOf(toolOptions{})
	for _, tc := range []struct {
		args []string
		took bool // ParseOne parses it rather than leave it to the whole tree
	}{
		{[]string{"open", "--node", "n1"}, true},
		{[]string{"open", "--node=n1", "--tag", "a", "--tag=b", "--count", "7", "f1", "f2"}, true},
		{[]string{"open", "-C", "/tmp", "--node", "n1"}, true},
		{[]string{"open", "--chdir=/tmp", "--node", "n1", "--", "--not-a-flag"}, true},
		{[]string{"close"}, true},
		{[]string{"close", "done", "--node", "x"}, true},
		{[]string{"other", "--node", "n2"}, true},
		{[]string{"open"}, false},                           // --node missing: the whole tree words it
		{[]string{"open", "--node", "n1", "--json"}, false}, // a sibling's flag
		{[]string{"open", "--node", "n1", "--bogus"}, false},
		{[]string{"open", "--node", "n1", "-h"}, false},
		{[]string{"open", "--help"}, false},
		{[]string{"open", "--node", "n1", "-Ch"}, false},
		{[]string{"-C", "/tmp", "open", "--node", "n1"}, false}, // a flag first
		{[]string{"read-it", "--json"}, false},                  // kong's word split
		{[]string{"named", "--node", "n1"}, false},              // the Go name, not the command's
		{[]string{"opne", "--node", "n1"}, false},
		{[]string{"why"}, false}, // the default subcommand's argument
		{[]string{}, false},
	} {
		diff, took := same(typ, tc.args)
		if diff != "" {
			t.Errorf("%q: %s", tc.args, diff)
		}
		if took != tc.took {
			t.Errorf("%q: ParseOne parsed it: %v, want %v", tc.args, took, tc.took)
		}
	}
}

// The tools with subcommands: every subcommand with each of its flags and
// positional arguments given, one at a time and all together, after -C,
// with a flag before the subcommand and with a sibling's flag, parses as
// through the whole tree.
func TestParseOneTools(t *testing.T) {
	for _, opts := range []any{iterlog.Options{}, loopcommit.Options{}, runnerrecord.Options{}, treeedit.Options{}, runnerworktree.Options{}} {
		typ := reflect.TypeOf(opts)
		p, err := kong.New(reflect.New(typ).Interface(), options()...)
		if err != nil {
			t.Fatal(err)
		}
		took := 0
		for _, sub := range p.Model.Children {
			var all []string
			var cases [][]string
			for _, f := range sub.Flags {
				a := []string{"--" + f.Name}
				if !f.IsBool() {
					a = append(a, value(f.Value))
				}
				all = append(all, a...)
				cases = append(cases, append([]string{sub.Name}, a...))
			}
			for _, pos := range sub.Positional {
				all = append(all, value(pos))
			}
			cases = append(cases, []string{sub.Name}, append([]string{sub.Name}, all...),
				append([]string{sub.Name, "-C", t.TempDir()}, all...), append([]string{"-C", ".", sub.Name}, all...))
			for _, other := range p.Model.Children {
				for _, f := range other.Flags {
					cases = append(cases, append([]string{sub.Name, "--" + f.Name}, all...))
				}
			}
			for _, args := range cases {
				diff, ok := same(typ, args)
				if diff != "" {
					t.Errorf("%s %q: %s", typ, args, diff)
				}
				if ok {
					took++
				}
			}
		}
		if took == 0 {
			t.Errorf("%s: ParseOne parsed none of the cases", typ)
		}
	}
}

// value is an argument kong accepts for v.
func value(v *kong.Value) string {
	switch v.Target.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Float64:
		return "2"
	}
	if v.Enum != "" {
		return strings.Split(v.Enum, ",")[0]
	}
	return "x"
}

type lazyOptions struct {
	cli.Chdir
	Lazy  closeCmd `cmd:"" help:"A name with a and z."`
	Other openCmd  `cmd:"" help:"Another."`
}

// A subcommand whose Go name is one word, any lower-case letters from a to
// z after its first, is parsed by ParseOne.
func TestParseOneOneWordNames(t *testing.T) {
	diff, took := same(reflect.TypeOf(lazyOptions{}), []string{"lazy", "why", "--node", "n1"})
	if diff != "" || !took {
		t.Errorf("lazy: ParseOne parsed it: %v, differs: %s", took, diff)
	}
}
