package contextwrite

import (
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/vocab"
)

// redStart is the note that goes into the goal section while the run's
// guard baseline (runner-start) was not green and no guard of the run has
// passed since ("Guard baseline"), so that the node is not
// blamed for failures it inherited; "" otherwise, or when either cannot
// be read.
func redStart(root string, begin iterdir.Begin) string {
	rec, ok, err := guard.ReadBaseline(root, begin.RunID)
	if err != nil || !ok {
		return ""
	}
	note := guard.RedStart(begin.RunID, rec)
	if note == "" {
		return ""
	}
	repo, err := git.Open(root)
	if err != nil {
		return ""
	}
	cs, err := repo.RunCommits(begin.HeadBefore, begin.RunID, "")
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if it, ok := subject.ParseRunIteration(c.Subject, begin.RunID); ok && it.Guard == vocab.GuardPass {
			return ""
		}
	}
	return "\n## Red start\n\n" + note + "\n"
}
