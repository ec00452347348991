package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// capped is the reference for CappedWriter: the whole output in memory,
// the tail length found by search rather than by formula.
func capped(out []byte, cap int) []byte {
	if len(out) <= cap {
		return out
	}
	head := cap / 2
	rest := cap - head
	if rest < maxMarkerLen {
		return out[:cap]
	}
	for tail := rest; tail >= 0; tail-- {
		omitted := len(out) - head - tail
		m := "\n[treeloop: " + strconv.Itoa(omitted) + " bytes truncated]\n"
		if len(m)+tail == rest {
			got := append([]byte{}, out[:head]...)
			got = append(got, m...)
			return append(got, out[len(out)-tail:]...)
		}
	}
	panic("no tail length fits")
}

// pattern returns n bytes that differ from place to place, so a byte out
// of position shows.
func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// writeChunks writes out to w in chunks whose sizes cycle through sizes.
func writeChunks(t testing.TB, w io.Writer, out []byte, sizes []int) {
	t.Helper()
	for i := 0; len(out) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(out))
		got, err := w.Write(out[:n])
		if err != nil || got != n {
			t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
		}
		out = out[n:]
	}
}

func TestCappedWriter(t *testing.T) {
	const c = 100_000
	tests := []struct {
		name   string
		cap    int64
		size   int
		chunks []int // cycled; nil means one write
	}{
		{"empty", c, 0, nil},
		{"one byte", c, 1, nil},
		{"below cap", c, c - 1, nil},
		{"at cap", c, c, nil},
		{"one above cap", c, c + 1, nil},
		{"ten times cap", c, 10 * c, nil},
		{"below cap small writes", c, c - 1, []int{7}},
		{"at cap small writes", c, c, []int{1, 2, 3}},
		{"above cap small writes", c, 3*c + 17, []int{1, 5, 4096, 13}},
		{"above cap byte writes", 1000, 10_000, []int{1}},
		{"huge single write", c, 5_000_000, nil},
		{"huge write after small", c, 5_000_000, []int{10, 4_999_990}},
		{"write straddles head", c, 2 * c, []int{c/2 - 3, 10, c}},
		{"odd cap", 1001, 5000, []int{333}},
		{"smallest cap with marker", MinMarkerCap, 500, []int{3}},
		{"cap one below marker", MinMarkerCap - 1, 500, []int{3}},
		{"cap smaller than marker", 20, 500, []int{3}},
		{"cap smaller than marker fits", 20, 20, nil},
		{"cap one", 1, 2, nil},
		{"cap zero", 0, 10, nil},
		{"negative cap", -5, 10, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := pattern(tt.size, uint64(i))
			var buf bytes.Buffer
			w := NewCappedWriter(&buf, tt.cap)
			chunks := tt.chunks
			if chunks == nil {
				chunks = []int{max(tt.size, 1)}
			}
			writeChunks(t, w, out, chunks)
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			want := capped(out, int(max(tt.cap, 0)))
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("output differs: got %d bytes, want %d\ngot tail  %q\nwant tail %q",
					buf.Len(), len(want), lastN(buf.Bytes(), 80), lastN(want, 80))
			}
			if w.Total() != int64(tt.size) {
				t.Errorf("Total() = %d, want %d", w.Total(), tt.size)
			}
			capped := int64(tt.size) > max(tt.cap, 0)
			if w.Truncated() != capped {
				t.Errorf("Truncated() = %v, want %v", w.Truncated(), capped)
			}
			if capped && int64(buf.Len()) != max(tt.cap, 0) {
				t.Errorf("truncated output is %d bytes, want exactly the cap %d", buf.Len(), tt.cap)
			}
			hasMarker := bytes.Contains(buf.Bytes(), []byte("[treeloop: "))
			if wantMarker := capped && tt.cap >= MinMarkerCap; hasMarker != wantMarker {
				t.Errorf("marker present = %v, want %v", hasMarker, wantMarker)
			}
		})
	}
}

func lastN(b []byte, n int) []byte { return b[max(len(b)-n, 0):] }

// TestCappedWriterEveryTotal checks every total around small caps, which
// walks the marker's count through its digit changes (9→10, 99→100, ...).
func TestCappedWriterEveryTotal(t *testing.T) {
	for _, c := range []int64{96, 97, 98, 99, 100, 101, 150, 257} {
		out := pattern(1500, uint64(c))
		for size := 0; size <= len(out); size++ {
			var buf bytes.Buffer
			w := NewCappedWriter(&buf, c)
			writeChunks(t, w, out[:size], []int{size%13 + 1})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if want := capped(out[:size], int(c)); !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("cap %d, size %d: got %q, want %q", c, size, buf.Bytes(), want)
			}
		}
	}
}

func TestCappedWriterMarkerCount(t *testing.T) {
	var buf bytes.Buffer
	w := NewCappedWriter(&buf, 1000)
	writeChunks(t, w, bytes.Repeat([]byte("x"), 1_000_000), []int{4096})
	w.Close()
	// 500 head bytes, a 36-byte marker, 464 tail bytes: 999,036 omitted.
	want := strings.Repeat("x", 500) + "\n[treeloop: 999036 bytes truncated]\n" + strings.Repeat("x", 464)
	if buf.String() != want {
		t.Fatalf("got %q", buf.String())
	}
}

// TestCappedWriterMemory: whatever the volume written, the writer holds
// the tail half only (Cap-Cap/2 bytes), in chunks smaller and larger than
// that half alike.
func TestCappedWriterMemory(t *testing.T) {
	for _, c := range []int64{97, 100, 1001} {
		w := NewCappedWriter(io.Discard, c)
		writeChunks(t, w, pattern(int(50*c), uint64(c)), []int{7, int(c), int(3 * c)})
		if got, want := len(w.ring), int(c-c/2); got != want || cap(w.ring) != want {
			t.Errorf("cap %d: the ring holds %d bytes (capacity %d), want %d", c, got, cap(w.ring), want)
		}
	}
}

// TestCappedWriterHeadStreams checks that the head reaches the underlying
// writer before Close, so a crash leaves it on disk.
func TestCappedWriterHeadStreams(t *testing.T) {
	var buf bytes.Buffer
	w := NewCappedWriter(&buf, 1000)
	out := pattern(5000, 9)
	w.Write(out[:300])
	if !bytes.Equal(buf.Bytes(), out[:300]) {
		t.Fatalf("after 300 bytes the writer holds %d bytes, want them all", buf.Len())
	}
	w.Write(out[300:])
	if !bytes.Equal(buf.Bytes(), out[:500]) {
		t.Fatalf("before Close the writer holds %d bytes, want the 500-byte head", buf.Len())
	}
	w.Close()
	if buf.Len() != 1000 {
		t.Fatalf("after Close: %d bytes, want 1000", buf.Len())
	}
}

func TestCappedWriterClose(t *testing.T) {
	var buf bytes.Buffer
	w := NewCappedWriter(&buf, 200)
	w.Write(pattern(1000, 3))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if buf.Len() != 200 {
		t.Fatalf("after two Closes: %d bytes, want 200", buf.Len())
	}
	if _, err := w.Write([]byte("late")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.after {
		n := f.after
		f.after = 0
		return n, errors.New("disk full")
	}
	f.after -= len(p)
	return len(p), nil
}

func TestCappedWriterUnderlyingError(t *testing.T) {
	w := NewCappedWriter(&failWriter{after: 10}, 1000)
	if n, err := w.Write(make([]byte, 8)); n != 8 || err != nil {
		t.Fatalf("first Write = %d, %v", n, err)
	}
	if n, err := w.Write(make([]byte, 8)); n != 2 || err == nil {
		t.Fatalf("failing Write = %d, %v; want 2 and an error", n, err)
	}
	if _, err := w.Write(make([]byte, 1)); err == nil {
		t.Fatal("Write after a failure succeeded")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Close = %v, want the underlying error", err)
	}
}

func TestCappedWriterTailError(t *testing.T) {
	w := NewCappedWriter(&failWriter{after: 600}, 1000)
	if _, err := w.Write(make([]byte, 5000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded although writing the tail failed")
	}
}

func TestCappedWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := NewCappedWriter(&buf, 10_000)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			line := []byte(fmt.Sprintf("writer %d\n", i))
			for range 1000 {
				w.Write(line)
			}
		})
	}
	wg.Wait()
	w.Close()
	if w.Total() != 8*1000*9 {
		t.Fatalf("Total() = %d, want %d", w.Total(), 8*1000*9)
	}
	if buf.Len() != 10_000 {
		t.Fatalf("output is %d bytes, want 10000", buf.Len())
	}
}

func FuzzCappedWriter(f *testing.F) {
	f.Add(int64(100), uint16(1000), uint8(7))
	f.Add(int64(98), uint16(131), uint8(1))
	f.Add(int64(5), uint16(6), uint8(0))
	f.Fuzz(func(t *testing.T, c int64, size uint16, chunk uint8) {
		c %= 5000
		out := pattern(int(size), uint64(size))
		var buf bytes.Buffer
		w := NewCappedWriter(&buf, c)
		writeChunks(t, w, out, []int{int(chunk) + 1, 3 * int(chunk)})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if want := capped(out, int(max(c, 0))); !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("cap %d, size %d: got %d bytes, want %d", c, size, buf.Len(), len(want))
		}
	})
}

func BenchmarkCappedWriter(b *testing.B) {
	for _, chunk := range []int{512, 32 << 10} {
		b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
			p := pattern(chunk, 1)
			w := NewCappedWriter(io.Discard, 100_000)
			b.SetBytes(int64(chunk))
			b.ReportAllocs()
			for b.Loop() {
				w.Write(p)
			}
			w.Close()
		})
	}
}
