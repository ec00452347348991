// Package gitfile reads and writes git's formats byte by byte, where
// lib/git would otherwise start a git process for the answer: the index
// file (gitformat-index(5)), tree objects (git-mktree(1), git-cat-file(1)),
// loose blobs written (gitformat-loose(5), git-hash-object(1)),
// `git cat-file --batch` output, the loose HEAD and branch refs
// (gitrepository-layout(5)) and git's config value syntax (git-config(1),
// "Values").
//
// Every reader here knows exactly one plain case of its format and
// refuses everything else, never guessing: the index reader with an error
// wrapping ErrNotPlain that says what it met, ParseTree with
// ErrMalformedTree, ReadBatch with ErrBatchShort or ErrBatchLine,
// LooseHead with ok false; ConfigInt gives the caller's default for a
// value git refuses. Deciding when to take this
// path, and the git command that answers otherwise, is lib/git's; a
// differential test there holds each reader to that git command on
// repositories real git makes. How much each saves is measured in
// bench/fastpaths.md.
package gitfile
