package proc

import (
	"context"
	"fmt"
	"os"
)

// LogInfo describes a capped log file written by RunToFile.
type LogInfo struct {
	Bytes     int64 // bytes the process printed, kept or not
	Truncated bool  // more than the cap was printed: the file holds head, marker, tail
}

// RunToFile runs s with its stdout and stderr going, capped to limit bytes
// (see CappedWriter), into a new file at logPath (created or truncated,
// mode 0644, synced before returning). Spec.Log is replaced. A failure to
// create, write or sync the log is returned as an error beside the Result
// (the process still ran, unless the file could not be created).
func RunToFile(ctx context.Context, s Spec, logPath string, limit int64) (Result, LogInfo, error) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return Result{ExitCode: -1}, LogInfo{}, fmt.Errorf("create log: %w", err)
	}
	w := NewCappedWriter(f, limit)
	s.Log = w
	res, runErr := Run(ctx, s)
	logErr := w.Close()
	if logErr == nil {
		logErr = res.OutputErr
	}
	if err := f.Sync(); err != nil && logErr == nil {
		logErr = fmt.Errorf("sync log: %w", err)
	}
	if err := f.Close(); err != nil && logErr == nil {
		logErr = fmt.Errorf("close log: %w", err)
	}
	info := LogInfo{Bytes: w.Total(), Truncated: w.Truncated()}
	if runErr != nil {
		return res, info, runErr
	}
	return res, info, logErr
}
