package proc

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Marker text around the count of omitted bytes; the full marker line is
// "\n[treeloop: N bytes truncated]\n".
const (
	markerPrefix = "\n[treeloop: "
	markerSuffix = " bytes truncated]\n"
	// maxMarkerLen is the longest possible marker (N with 19 digits, the
	// most an int64 holds).
	maxMarkerLen = len(markerPrefix) + 19 + len(markerSuffix)
)

// MinMarkerCap is the smallest cap for which a CappedWriter keeps a tail
// after a truncation marker (97 bytes): the tail half, Cap-Cap/2 bytes,
// must hold the longest possible marker.
const MinMarkerCap = int64(2*maxMarkerLen - 1)

var errClosed = errors.New("capped writer closed")

// CappedWriter passes at most Cap bytes of what is written to it on to an
// underlying writer, streaming, with memory bounded by about Cap/2 bytes
// whatever the volume written.
//
// If the total written is at most Cap bytes, the underlying writer receives
// exactly those bytes. Otherwise it receives exactly Cap bytes: the first
// Cap/2 bytes written, the marker line "\n[treeloop: N bytes truncated]\n"
// (N is the number of bytes omitted), then the last bytes written, filling
// the output to Cap bytes. The head is written through as it arrives, so a
// crash still leaves it on disk; the tail is held in a ring buffer of
// Cap-Cap/2 bytes and written, after the marker, by Close.
//
// When Cap is below MinMarkerCap (97 bytes), too small for a marker, there
// is no marker and no tail: the underlying writer receives the first Cap
// bytes only. A negative Cap counts as 0.
//
// A CappedWriter is safe for concurrent use. Write always consumes all of p
// unless the underlying writer fails; the first such error is returned by
// every later Write and by Close.
type CappedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	cap     int64
	headCap int64 // bytes passed straight through
	marker  bool  // false: head only, no marker, no tail
	head    int64 // head bytes written so far
	total   int64 // bytes accepted by Write
	ring    []byte
	rpos    int // next write position in ring
	rlen    int // bytes held in ring
	closed  bool
	err     error
}

// NewCappedWriter returns a CappedWriter over w that keeps cap bytes (see
// CappedWriter). It does not take ownership of w: Close flushes the tail
// but does not close w.
func NewCappedWriter(w io.Writer, cap int64) *CappedWriter {
	if cap < 0 {
		cap = 0
	}
	c := &CappedWriter{w: w, cap: cap, headCap: cap}
	if cap >= MinMarkerCap {
		c.marker = true
		c.headCap = cap / 2
	}
	return c
}

// Cap returns the byte cap the writer was created with.
func (c *CappedWriter) Cap() int64 { return c.cap }

// Write keeps what fits of p under the cap and discards the rest, reporting
// len(p) bytes written. It fails only when the underlying writer fails, or
// after Close.
func (c *CappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errClosed
	}
	if c.err != nil {
		return 0, c.err
	}
	size := len(p)
	if n := min(int64(len(p)), c.headCap-c.head); n > 0 {
		m, err := c.w.Write(p[:n])
		c.head += int64(m)
		c.total += int64(m)
		if err == nil && int64(m) < n {
			err = io.ErrShortWrite
		}
		if err != nil {
			c.err = err
			return m, err
		}
		p = p[n:]
	}
	c.total += int64(len(p))
	if len(p) > 0 && c.marker {
		c.keepTail(p)
	}
	return size, nil
}

// keepTail appends p to the ring buffer, dropping its oldest bytes.
func (c *CappedWriter) keepTail(p []byte) {
	if c.ring == nil {
		c.ring = make([]byte, c.cap-c.headCap)
	}
	size := len(c.ring)
	if len(p) >= size {
		copy(c.ring, p[len(p)-size:])
		c.rpos, c.rlen = 0, size
		return
	}
	n := copy(c.ring[c.rpos:], p)
	copy(c.ring, p[n:])
	c.rpos = (c.rpos + len(p)) % size
	c.rlen = min(c.rlen+len(p), size)
}

// lastTail returns the last k bytes held in the ring, as up to two slices.
func (c *CappedWriter) lastTail(k int) (a, b []byte) {
	if c.rlen < len(c.ring) { // never wrapped: data is ring[:rlen]
		return c.ring[c.rlen-k : c.rlen], nil
	}
	if k <= c.rpos {
		return c.ring[c.rpos-k : c.rpos], nil
	}
	return c.ring[len(c.ring)-(k-c.rpos):], c.ring[:c.rpos]
}

// markerFor returns the marker line for total bytes under cap, the one
// whose own length makes head + marker + tail exactly cap bytes.
func markerFor(total, cap int64) string {
	// omitted = total - cap + len(marker), and len(marker) depends on the
	// digits of omitted; omitted grows with the digit count, so the first
	// consistent count is the answer.
	base := int64(len(markerPrefix) + len(markerSuffix))
	for d := int64(1); d <= 19; d++ {
		omitted := total - cap + base + d
		if s := strconv.FormatInt(omitted, 10); int64(len(s)) == d {
			return markerPrefix + s + markerSuffix
		}
	}
	return markerPrefix + strconv.FormatInt(total-cap+base+19, 10) + markerSuffix
}

// Close writes the held tail, after the marker when output was truncated,
// to the underlying writer. Later calls do nothing and return the same
// error; later Writes fail.
func (c *CappedWriter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.err
	}
	c.closed = true
	if c.err != nil || !c.marker || c.rlen == 0 {
		return c.err
	}
	k := c.rlen
	var parts [3][]byte
	if c.total > c.cap {
		m := markerFor(c.total, c.cap)
		k = int(c.cap - c.headCap - int64(len(m)))
		parts[0] = []byte(m)
	}
	parts[1], parts[2] = c.lastTail(k)
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if _, err := c.w.Write(p); err != nil {
			c.err = fmt.Errorf("write tail: %w", err)
			break
		}
	}
	c.ring = nil
	return c.err
}

// Total returns the number of bytes accepted by Write, kept or not.
func (c *CappedWriter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Truncated reports whether more than Cap bytes were written, so that the
// output lost bytes.
func (c *CappedWriter) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > c.cap
}
