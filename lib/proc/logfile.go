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
	res, info, synced, err := RunToFileSyncing(ctx, s, logPath, limit)
	if serr := synced(); err == nil {
		err = serr
	}
	return res, info, err
}

// RunToFileSyncing is RunToFile returning as soon as the process has ended
// and its output is written, while the log's fsync runs: synced waits for
// it and returns the error RunToFile would have returned for it (a failed
// sync or close of the log; nil when err already says why the run
// failed). synced is never nil; the caller calls it, once, before it
// reports the log written (guard-run checks what the guard
// changed meanwhile).
func RunToFileSyncing(ctx context.Context, s Spec, logPath string, limit int64) (res Result, info LogInfo, synced func() error, err error) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return Result{ExitCode: -1}, LogInfo{}, func() error { return nil }, fmt.Errorf("create log: %w", err)
	}
	w := NewCappedWriter(f, limit)
	s.Log = w
	res, runErr := Run(ctx, s)
	logErr := w.Close()
	if logErr == nil {
		logErr = res.OutputErr
	}
	done := make(chan error, 1)
	go func() {
		err := f.Sync()
		if err != nil {
			err = fmt.Errorf("sync log: %w", err)
		}
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close log: %w", cerr)
		}
		done <- err
	}()
	failed := runErr != nil || logErr != nil
	synced = func() error {
		if err := <-done; !failed {
			return err
		}
		return nil
	}
	info = LogInfo{Bytes: w.Total(), Truncated: w.Truncated()}
	if runErr != nil {
		return res, info, synced, runErr
	}
	return res, info, synced, logErr
}
