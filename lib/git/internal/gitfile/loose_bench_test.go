package gitfile

import (
	"crypto/sha1"
	"strconv"
	"testing"
)

// BenchmarkWriteLoose: one new loose blob of a few hundred bytes (an
// iteration log's size) per op, as a step's seal writes several.
func BenchmarkWriteLoose(b *testing.B) {
	objects := b.TempDir()
	body := make([]byte, 400)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		copy(body, strconv.Itoa(i)) // a new object every time
		if _, err := WriteLoose(objects, sha1.New, "blob", body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadLoose: one read of a loose blob of a few hundred bytes per
// op, checked against its id, as a step reads config.toml and the tree's
// objects at its base.
func BenchmarkReadLoose(b *testing.B) {
	objects := b.TempDir()
	id, err := WriteLoose(objects, sha1.New, "blob", make([]byte, 400))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := ReadLoose(objects, id, sha1.New); !ok {
			b.Fatal("not read")
		}
	}
}
