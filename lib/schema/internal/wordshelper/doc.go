// Package wordshelper holds the tests of schema.WordsOrHelper and
// tree.LoadEdited in a program that does not link the full validator, as
// agent-exec and step-end do not: its test binary must not link
// lib/schema/full, so it lives apart from lib/schema's own tests, which
// do.
package wordshelper
