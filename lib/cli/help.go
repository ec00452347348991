package cli

import (
	"strings"

	"github.com/alecthomas/kong"
)

// helpValue is kong's help of a flag or argument (with its environment
// variable) and, when it has a default its text does not already state,
// "default: X": --help shows what an option is when it is not given.
func helpValue(v *kong.Value) string {
	help := kong.DefaultHelpValueFormatter(v)
	shown := v.Flag != nil && v.Tag.PlaceHolder == "" // kong shows it as the flag's placeholder: --last=5
	if v.Default == "" || v.IsBool() || shown || strings.Contains(strings.ToLower(v.Help), "default") {
		return help
	}
	suffix := "(default: " + v.Default + ")"
	switch {
	case strings.HasSuffix(help, "."):
		return help[:len(help)-1] + " " + suffix + "."
	case help == "":
		return suffix
	}
	return help + " " + suffix
}
