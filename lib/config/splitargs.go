package config

import (
	"errors"
	"strings"
)

// SplitArgs splits s into words the way a POSIX shell does, without any
// expansion ($, `, globs and ~ are literal): blanks (space, tab, newline,
// carriage return) separate words; a backslash outside quotes takes the next
// character literally (backslash-newline joins lines); single quotes keep
// everything up to the next single quote; inside double quotes a backslash
// escapes only $ ` " \ and newline and is kept before anything else. A pair
// of empty quotes gives an empty word. An unterminated quote or a trailing
// backslash is an error. Blank input gives an empty, non-nil slice.
func SplitArgs(s string) ([]string, error) {
	args := []string{}
	var word strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			if s[i] == '\n' {
				continue // line continuation
			}
			word.WriteByte(s[i])
			inWord = true
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			word.WriteString(s[i+1 : i+1+end])
			i += 1 + end
			inWord = true
		case '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				c := s[i]
				if c == '"' {
					closed = true
					break
				}
				if c == '\\' && i+1 < len(s) {
					switch s[i+1] {
					case '$', '`', '"', '\\':
						i++
						word.WriteByte(s[i])
						continue
					case '\n':
						i++
						continue
					}
				}
				word.WriteByte(c)
			}
			if !closed {
				return nil, errors.New("unterminated double quote")
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, word.String())
	}
	return args, nil
}
