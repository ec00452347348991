package seal

// SetStatBatch sets the fewest indexed files Restore stats with several
// goroutines (statBatch) and returns what puts it back.
func SetStatBatch(n int) (restore func()) {
	old := statBatch
	statBatch = n
	return func() { statBatch = old }
}
