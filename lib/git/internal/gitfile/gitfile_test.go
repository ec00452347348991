package gitfile

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/treeloop/treeloop/lib/internal/gittest"
)

// gitIn runs git args in dir with stdin, returning its output and error.
func gitIn(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gittest.Vars(dir)...)
	cmd.Stdin = bytes.NewReader(stdin)
	return cmd.Output()
}

// randomTree is a tree of n entries with random names (bytes git allows
// in a name: no NUL or "/", not "." or ".."; names that sort around a
// directory's "/") and modes, and random ids of idLen bytes.
func randomTree(rng *rand.Rand, n, idLen int) Tree {
	modes := []string{"100644", "100755", "120000", "160000", "40000"}
	alphabet := []byte("ab-._ é\t~!z09")
	t := Tree{}
	for len(t) < n {
		name := make([]byte, 1+rng.IntN(6))
		for i := range name {
			name[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if s := string(name); s == "." || s == ".." || !utf8Valid(name) {
			continue
		}
		id := make([]byte, idLen)
		for i := range id {
			id[i] = byte(rng.IntN(256))
		}
		t[string(name)] = TreeEntry{Mode: modes[rng.IntN(len(modes))], ID: id}
	}
	return t
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\x00") == string(b) }

// TestDifferentialEncodeTree: on random trees (SHA-1 and SHA-256), the
// object EncodeTree writes has the id `git mktree` gives the entries
// EncodeTree lists for it, `git cat-file tree` prints it byte for byte,
// and ParseTree reads it back to the same entries.
func TestDifferentialEncodeTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for _, format := range []struct {
		name    string
		newHash func() hash.Hash
	}{{"sha1", sha1.New}, {"sha256", sha256.New}} {
		t.Run(format.name, func(t *testing.T) {
			dir := t.TempDir()
			gittest.Run(t, dir, "init", "-q", "--object-format="+format.name)
			idLen := format.newHash().Size()
			for round := range 40 {
				tree := randomTree(rng, 1+rng.IntN(12), idLen)
				obj, lines := EncodeTree(tree)
				want := hex.EncodeToString(HashObject(format.newHash(), "tree", obj))
				out, err := gitIn(dir, lines, "mktree", "-z", "--missing")
				if err != nil {
					t.Fatalf("round %d: git mktree: %v\n%q", round, err, lines)
				}
				if got := strings.TrimSpace(string(out)); got != want {
					t.Fatalf("round %d: git mktree %s, EncodeTree's object %s\n%q", round, got, want, lines)
				}
				stored, err := gitIn(dir, nil, "cat-file", "tree", want)
				if err != nil || !bytes.Equal(stored, obj) {
					t.Fatalf("round %d: git cat-file tree: %v\n%q\nEncodeTree:\n%q", round, err, stored, obj)
				}
				back, err := ParseTree(stored, idLen)
				if err != nil || !maps.EqualFunc(back, tree, func(a, b TreeEntry) bool { return a.Mode == b.Mode && bytes.Equal(a.ID, b.ID) }) {
					t.Fatalf("round %d: ParseTree: %v, %v; want %v", round, back, err, tree)
				}
			}
		})
	}
	for _, bad := range []string{"100644 a", "100644a\x00" + strings.Repeat("x", 20), "100644 a\x00short"} {
		if _, err := ParseTree([]byte(bad), 20); !errors.Is(err, ErrMalformedTree) {
			t.Errorf("ParseTree(%q): %v, want ErrMalformedTree", bad, err)
		}
	}
}

// TestDifferentialReadBatch: ReadBatch reads `git cat-file --batch`'s
// answers to names that exist (blobs, trees, a commit, empty and binary
// contents), are missing (spaces in the name included) or are
// ambiguous, each as `git cat-file -t` and `git cat-file <type>` give it.
func TestDifferentialReadBatch(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{"a.txt": "a\n", "empty": "", "bin": "\x00\n\n\xff", "d/e f": "with a space\n"}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "c")
	names := []string{"HEAD", "HEAD^{tree}", "HEAD:a.txt", "HEAD:empty", "HEAD:bin", "HEAD:d", "HEAD:d/e f",
		"HEAD:nothing", "HEAD:d/no such file", "0000", ":a.txt"}
	out, err := gitIn(dir, []byte(strings.Join(names, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		var rec BatchRecord
		if rec, out, err = ReadBatch(out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		typ, terr := gitIn(dir, nil, "cat-file", "-t", name)
		if terr != nil {
			if !rec.Missing {
				t.Errorf("%s: ReadBatch read a %s; git cat-file -t: %v", name, rec.Type, terr)
			}
			continue
		}
		id := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", name))
		body, _ := gitIn(dir, nil, "cat-file", strings.TrimSpace(string(typ)), name)
		if rec.Missing || rec.ID != id || rec.Type != strings.TrimSpace(string(typ)) || !bytes.Equal(rec.Body, body) {
			t.Errorf("%s: ReadBatch = %+v; git: %s %s %q", name, rec, id, typ, body)
		}
	}
	if len(out) != 0 {
		t.Errorf("left over: %q", out)
	}
	if _, rest, err := ReadBatch([]byte("abc blob 5\nab")); !errors.Is(err, ErrBatchLine) || string(rest) != "ab" {
		t.Errorf("content cut short: %v, rest %q; want ErrBatchLine and what follows the line", err, rest)
	}
	if _, rest, err := ReadBatch([]byte("abc blob")); !errors.Is(err, ErrBatchShort) || rest != nil {
		t.Errorf("no line: %v, rest %q; want ErrBatchShort", err, rest)
	}
}

// TestDifferentialConfigValues: ConfigInt and ConfigFalse read a value
// as `git config --type=int` and `--type=bool` do, and a value git
// refuses as an integer reads as the default given.
func TestDifferentialConfigValues(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q")
	for _, v := range []string{"0", "1", "6700", " 12 ", "1k", "2K", "3m", "1g", "-5", "", "abc", "1x", "1.5", "k",
		"true", "false", "yes", "no", "on", "off", "TRUE", "Off", "2", "00", " false", "12 ", "010", "0x1f", "-0", "+3", "0k", "1_0", "0x"} {
		gittest.Run(t, dir, "config", "test.value", v)
		out, err := gitIn(dir, nil, "config", "--type=int", "test.value")
		n, _ := ConfigInt(v, -12345)
		if err != nil {
			if n != -12345 {
				t.Errorf("ConfigInt(%q) = %d; git refuses it (want the default)", v, n)
			}
		} else if want, _ := strconv.Atoi(strings.TrimSpace(string(out))); n != want {
			t.Errorf("ConfigInt(%q) = %d; git config --type=int: %s", v, n, out)
		}
		out, err = gitIn(dir, nil, "config", "--type=bool", "test.value")
		if err == nil {
			if gitFalse := strings.TrimSpace(string(out)) == "false"; ConfigFalse(v) != gitFalse {
				t.Errorf("ConfigFalse(%q) = %v; git config --type=bool: %s", v, ConfigFalse(v), out)
			}
		}
	}
}

// TestDifferentialLooseObjects: LooseObjects summed over the 256 fan-out
// directories is git count-objects' count of loose objects.
func TestDifferentialLooseObjects(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q")
	for i := range 300 {
		if _, err := gitIn(dir, []byte(fmt.Sprint(i)), "hash-object", "-w", "--stdin"); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, ".git/objects/17/not-an-object"), nil, 0o644)
	sum := 0
	for i := range 256 {
		sum += LooseObjects(filepath.Join(dir, ".git/objects"), fmt.Sprintf("%02x", i))
	}
	want := gittest.Run(t, dir, "count-objects")
	if got := fmt.Sprintf("%d objects", sum); !strings.HasPrefix(want, got+",") {
		t.Errorf("LooseObjects summed: %s; git count-objects: %s", got, want)
	}
}

// objectFormats are git's object formats, each with its hash.
var objectFormats = []struct {
	name    string
	newHash func() hash.Hash
}{{"sha1", sha1.New}, {"sha256", sha256.New}}

// newObjectRepo is a new repository of object format name and its
// objects directory.
func newObjectRepo(t *testing.T, name string) (dir, objects string) {
	dir = t.TempDir()
	gittest.Run(t, dir, "init", "-q", "--object-format="+name)
	return dir, filepath.Join(dir, ".git", "objects")
}

// TestDifferentialWriteLooseFile: in SHA-1 and SHA-256 repositories, the
// loose blobs WriteLooseFile writes of random files (empty, one byte, past
// a deflate window, text and binary) have git hash-object's ids, git
// cat-file reads them back byte for byte and git fsck --strict accepts
// them, mode 0444; one stored already keeps its file, its time renewed; a
// directory, a missing file and an objects directory that cannot be
// written are errors, and no temporary file is left.
func TestDifferentialWriteLooseFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, format := range objectFormats {
		dir, objects := newObjectRepo(t, format.name)
		for i, size := range []int{0, 1, 5000, 70000, 200000} {
			data := make([]byte, size)
			for j := range data {
				if i%2 == 0 {
					data[j] = "ab\n"[rng.IntN(3)]
				} else {
					data[j] = byte(rng.IntN(256))
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("f%d", i))
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := gitIn(dir, nil, "hash-object", "--no-filters", p)
			if err != nil {
				t.Fatal(err)
			}
			id, err := WriteLooseFile(objects, format.newHash, p)
			if err != nil || id != strings.TrimSpace(string(want)) {
				t.Fatalf("%s, %d bytes: WriteLooseFile = %s, %v; git hash-object %s", format.name, size, id, err, want)
			}
			if out, err := gitIn(dir, nil, "cat-file", "blob", id); err != nil || !bytes.Equal(out, data) {
				t.Fatalf("%s: git cat-file blob %s: %d bytes, %v; want %d", format.name, id, len(out), err, size)
			}
			obj := filepath.Join(objects, id[:2], id[2:])
			st, err := os.Stat(obj)
			if err != nil || st.Mode().Perm() != 0o444 {
				t.Fatalf("%s: object %s: %v, %v; want mode 0444", format.name, id, st.Mode(), err)
			}
			old := st.ModTime().Add(-48 * 3600e9)
			if err := os.Chtimes(obj, old, old); err != nil {
				t.Fatal(err)
			}
			if again, err := WriteLooseFile(objects, format.newHash, p); err != nil || again != id {
				t.Fatalf("%s: again = %s, %v; want %s", format.name, again, err, id)
			}
			if st, err := os.Stat(obj); err != nil || !st.ModTime().After(old) {
				t.Fatalf("%s: the stored object's time was not renewed: %v, %v", format.name, st.ModTime(), err)
			}
		}
		if out, err := gitIn(dir, nil, "fsck", "--strict"); err != nil {
			t.Fatalf("%s: git fsck --strict: %v\n%s", format.name, err, out)
		}
		if _, err := WriteLooseFile(objects, format.newHash, dir); err == nil {
			t.Fatalf("%s: a directory stored", format.name)
		}
		if _, err := WriteLooseFile(objects, format.newHash, filepath.Join(dir, "missing")); err == nil {
			t.Fatalf("%s: a missing file stored", format.name)
		}
		p := filepath.Join(dir, "new")
		os.WriteFile(p, []byte("new\n"), 0o644)
		if _, err := WriteLooseFile(filepath.Join(p, "objects"), format.newHash, p); err == nil {
			t.Fatalf("%s: stored under a file", format.name)
		}
		if tmps, _ := filepath.Glob(filepath.Join(objects, "*", "tmp_obj_*")); len(tmps) > 0 {
			t.Fatalf("%s: temporary files left: %q", format.name, tmps)
		}
	}
}

// TestDifferentialWriteLoose: trees (random entries, SHA-1 and SHA-256)
// and blobs written from memory get git hash-object's ids, git cat-file
// gives their type and bytes back, and LooseType reads the type from the
// object file; it refuses a missing object and a file that is not one.
func TestDifferentialWriteLoose(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, format := range objectFormats {
		dir, objects := newObjectRepo(t, format.name)
		for i := range 20 {
			typ, body := "blob", []byte(fmt.Sprint("blob ", i, "\n"))
			if i%2 == 0 {
				typ = "tree"
				body, _ = EncodeTree(randomTree(rng, 1+rng.IntN(12), format.newHash().Size()))
			}
			want, err := gitIn(dir, body, "hash-object", "-t", typ, "--literally", "--stdin")
			if err != nil {
				t.Fatal(err)
			}
			id, err := WriteLoose(objects, format.newHash, typ, body)
			if err != nil || id != strings.TrimSpace(string(want)) {
				t.Fatalf("%s %s: WriteLoose = %s, %v; git hash-object %s", format.name, typ, id, err, want)
			}
			if got, ok := LooseType(objects, id); !ok || got != typ {
				t.Fatalf("%s: LooseType(%s) = %q, %v; want %s", format.name, id, got, ok, typ)
			}
			if got, data, ok := ReadLoose(objects, id, format.newHash); !ok || got != typ || !bytes.Equal(data, body) {
				t.Fatalf("%s: ReadLoose(%s) = %q, %d bytes, %v; want %s, %d", format.name, id, got, len(data), ok, typ, len(body))
			}
			if out, err := gitIn(dir, nil, "cat-file", typ, id); err != nil || !bytes.Equal(out, body) {
				t.Fatalf("%s: git cat-file %s %s: %v", format.name, typ, id, err)
			}
		}
		missing := strings.Repeat("ab", format.newHash().Size())
		if typ, ok := LooseType(objects, missing); ok {
			t.Fatalf("%s: LooseType of a missing object = %q", format.name, typ)
		}
		if _, _, ok := ReadLoose(objects, missing, format.newHash); ok {
			t.Fatalf("%s: ReadLoose of a missing object", format.name)
		}
		os.MkdirAll(filepath.Join(objects, missing[:2]), 0o755)
		os.WriteFile(filepath.Join(objects, missing[:2], missing[2:]), []byte("not zlib"), 0o444)
		if typ, ok := LooseType(objects, missing); ok {
			t.Fatalf("%s: LooseType of a file that is no object = %q", format.name, typ)
		}
		// Objects under that id whose bytes are not its own: another
		// blob's, a header that claims more or fewer bytes than follow,
		// one that claims more than ReadLoose inflates.
		for _, forged := range []string{"blob 4\x00abc\n", "blob 9\x00abc\n", "blob 2\x00abc\n", fmt.Sprintf("blob %d\x00", maxLooseRead+1)} {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write([]byte(forged))
			w.Close()
			os.Chmod(filepath.Join(objects, missing[:2], missing[2:]), 0o644)
			os.WriteFile(filepath.Join(objects, missing[:2], missing[2:]), z.Bytes(), 0o444)
			if typ, _, ok := ReadLoose(objects, missing, format.newHash); ok {
				t.Fatalf("%s: ReadLoose of %q under another id = %s", format.name, forged, typ)
			}
		}
		id, _ := WriteLoose(objects, format.newHash, "blob", []byte("abc\n"))
		if _, _, ok := ReadLoose(objects, id[:len(id)-1], format.newHash); ok {
			t.Fatalf("%s: ReadLoose of a short id", format.name)
		}
		empty, err := WriteLoose(objects, format.newHash, "blob", nil)
		if err != nil {
			t.Fatal(err)
		}
		if typ, data, ok := ReadLoose(objects, empty, format.newHash); !ok || typ != "blob" || len(data) != 0 {
			t.Fatalf("%s: ReadLoose of the empty blob = %q, %q, %v", format.name, typ, data, ok)
		}
	}
}

// TestLooseHeaderAsGitParses: a loose object whose header spells its size
// as git's parser would not take it (a leading zero, a sign, nothing)
// is no loose object to ReadLoose or LooseType, whose bytes would
// otherwise hash to its id: git answers ("unable to parse header"). A
// FIFO at an object's name is none either, and opening it does not block.
func TestLooseHeaderAsGitParses(t *testing.T) {
	_, objects := newObjectRepo(t, "sha1")
	id := hex.EncodeToString(HashObject(sha1.New(), "blob", []byte("abcdef")))
	p := filepath.Join(objects, id[:2], id[2:])
	os.MkdirAll(filepath.Dir(p), 0o755)
	for _, head := range []string{"blob 6", "blob 06", "blob +6", "blob ", "blob 6 ", "blob 0x6"} {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write([]byte(head + "\x00abcdef"))
		w.Close()
		os.Remove(p)
		if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		want := head == "blob 6"
		if _, _, ok := ReadLoose(objects, id, sha1.New); ok != want {
			t.Errorf("ReadLoose of header %q: %v", head, ok)
		}
		if _, ok := LooseType(objects, id); ok != want {
			t.Errorf("LooseType of header %q: %v", head, ok)
		}
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := ReadLoose(objects, id, sha1.New); ok {
		t.Error("ReadLoose of a FIFO")
	}
	if _, ok := LooseType(objects, id); ok {
		t.Error("LooseType of a FIFO")
	}
}

// TestCanonicalTree: EncodeTree's trees are canonical; a zero-padded
// directory mode, a mode git does not write, a name twice or entries out
// of git's order are not.
func TestCanonicalTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 50 {
		body, _ := EncodeTree(randomTree(rng, 1+rng.IntN(12), 20))
		tr, err := ParseTree(body, 20)
		if err != nil || !CanonicalTree(body, tr) {
			t.Fatalf("EncodeTree's tree not canonical: %v", err)
		}
	}
	id := bytes.Repeat([]byte{7}, 20)
	entry := func(mode, name string) []byte { return append([]byte(mode+" "+name+"\x00"), id...) }
	for name, body := range map[string][]byte{
		"zero padded":  entry("040000", "d"),
		"group write":  entry("100664", "f"),
		"twice":        append(entry("100644", "a"), entry("100644", "a")...),
		"out of order": append(entry("100644", "b"), entry("100644", "a")...),
		"dir order":    append(entry("40000", "a"), entry("100644", "a.b")...), // "a/" sorts after "a.b"
	} {
		tr, err := ParseTree(body, 20)
		if err != nil {
			t.Fatal(err)
		}
		if CanonicalTree(body, tr) {
			t.Errorf("%s: canonical", name)
		}
	}
	ok := append(entry("100644", "a.b"), entry("40000", "a")...)
	if tr, _ := ParseTree(ok, 20); !CanonicalTree(ok, tr) {
		t.Error(`"a.b" before the directory "a": not canonical`)
	}
}
