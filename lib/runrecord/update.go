package runrecord

import (
	"fmt"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
)

// OpenLive reads the record id (an id tree.ValidID accepts) of the
// repository root, refusing a finished one: a finished record is never
// rewritten. It returns the record's path and the record.
func OpenLive(root, id string) (string, Record, error) {
	path := filepath.Join(root, layout.RunRecord(id))
	r, err := Load(path)
	if err != nil {
		return "", r, fmt.Errorf("read the run record: %v", fsutil.Cause(err))
	}
	if Finished(r) {
		return "", r, fmt.Errorf("run record %s is finished (%s) and is never rewritten", id, r.Status)
	}
	return path, r, nil
}

// Update refreshes the live record id after a committed iteration and
// runs its hooks (Repo.Iterated), with detach also leaves it running with
// no runner attached (a runner-step run alone whose run goes on), and
// saves it: runner-record update, and the end of runner-step.
func Update(root, id string, h Hooks, detach bool) error {
	path, r, err := OpenLive(root, id)
	if err != nil {
		return err
	}
	rp, err := ReadRepo(root)
	if err != nil {
		return err
	}
	if err := rp.Iterated(&r, Now(), h); err != nil {
		return err
	}
	if detach {
		r.Runner = Runner{}
	}
	if err := Save(path, r); err != nil {
		return fmt.Errorf("write the run record: %v", fsutil.Cause(err))
	}
	return nil
}
