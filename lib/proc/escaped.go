package proc

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// becomeSubreaper makes this process a child subreaper: a descendant whose
// parent dies is reparented to it rather than to PID 1, so a process that
// left the group with setsid or a double fork can still be found (seed 004,
// issue "Reliability and safety" §2). The setting lasts for the process.
func becomeSubreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// Escaped is a process that outlived its process group and was killed.
type Escaped struct {
	PID     int    `json:"pid"`
	PPID    int    `json:"ppid"`    // its parent when the group ended (before it was reparented)
	Command string `json:"command"` // Command's answer, as it presented itself
}

// sweeping is held while killChildren sweeps and while a Spared run
// starts its process, so that no sweep finds a spared process before it is
// known; spared holds the processes of the Spared runs in flight.
var (
	sweeping sync.Mutex
	spared   = map[int]bool{}
)

// KillStray kills and reaps every child of this process that is left
// (killChildren): the escapees of a Spared run that outlived its
// KillEscaped neighbour. Call it once neither runs. It returns them.
func KillStray() []Escaped { return killChildren(noGroup) }

// noGroup is a process group no process is in. Not 0: a process whose
// group's leader lies outside this PID namespace (treeloop started under
// unshare --pid, its session's leader outside) reads its group as 0.
const noGroup = -1

// killChildren SIGKILLs and reaps every child of this process, over and
// over, until none is left: a dying child's own children are reparented
// to this subreaper before it can be reaped, so each round finds the next
// generation. It returns the processes it killed, with each one's parent
// as the process table showed it before the first kill. Call it only when
// no other child of this process is expected (no exec.Cmd in flight): it
// reaps whatever it finds but a Spared run's process. Members of the process group pgid (already
// killed with it) and zombies are reaped but not counted.
func killChildren(pgid int) []Escaped {
	sweeping.Lock()
	defer sweeping.Unlock()
	var killed []Escaped
	self := os.Getpid()
	parents := map[int]int{}
	eachProcess(func(pid int, stat []byte) {
		if _, ppid, _, ok := parseStatFields(stat); ok {
			parents[pid] = ppid
		}
	})
	for round := 0; round < 1000; round++ {
		kids := slices.DeleteFunc(childrenOf(self), func(k child) bool { return spared[k.pid] })
		if len(kids) == 0 {
			return killed
		}
		for _, k := range kids {
			counted := k.pgrp != pgid && k.state != 'Z' && k.state != 'X'
			e := Escaped{PID: k.pid, PPID: self}
			if p, ok := parents[k.pid]; ok {
				e.PPID = p
			}
			if counted {
				e.Command = Command(k.pid) // read before the kill: a dead process has no cmdline
			}
			if syscall.Kill(k.pid, syscall.SIGKILL) == nil && counted {
				killed = append(killed, e)
			}
		}
		for _, k := range kids {
			pid := k.pid
			var ws syscall.WaitStatus
			for {
				_, err := syscall.Wait4(pid, &ws, 0, nil)
				if !errors.Is(err, syscall.EINTR) {
					break
				}
			}
		}
	}
	return killed
}

// Command is how a process presents itself: its command line (arguments
// joined by spaces, at most 200 bytes), else its name; "" when it is
// gone. The process chooses both: for display only.
func Command(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil && len(data) > 0 {
		s := strings.TrimSpace(strings.ReplaceAll(string(bytes.TrimRight(data, "\x00")), "\x00", " "))
		if len(s) > 200 {
			s = s[:200]
		}
		if s != "" {
			return s
		}
	}
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
		return strings.TrimSpace(string(comm))
	}
	return ""
}

type child struct {
	pid, pgrp int
	state     byte
}

// childrenOf lists the processes whose parent is ppid, zombies included
// (they still need reaping), from /proc/<pid>/stat.
func childrenOf(ppid int) []child {
	var kids []child
	eachProcess(func(pid int, stat []byte) {
		if state, parent, pgrp, ok := parseStatFields(stat); ok && parent == ppid {
			kids = append(kids, child{pid: pid, pgrp: pgrp, state: state})
		}
	})
	return kids
}

// eachProcess calls fn with the pid and the /proc/<pid>/stat text of every
// process it can read.
func eachProcess(fn func(pid int, stat []byte)) {
	eachPID(func(pid int) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return // exited meanwhile
		}
		fn(pid, data)
	})
}

// eachPID calls fn with the pid of every process /proc lists, for the
// callers that read other files of it than its stat.
func eachPID(fn func(pid int)) {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil {
			fn(pid)
		}
	}
}

// KillTagged SIGKILLs every process, other than this one, whose
// environment holds the exact entry tag ("KEY=value"), and returns how
// many it signalled. Descendants inherit the environment, so this finds
// what an agent started even after a crash killed its supervisor
// (recovery, issue "Reliability and safety" §1-2). A process that cleared
// its environment is out of its reach; processes of other users are not
// readable unless running as root.
func KillTagged(tag string) int {
	if tag == "" || !strings.Contains(tag, "=") {
		return 0
	}
	want := []byte(tag)
	self := os.Getpid()
	n := 0
	eachPID(func(pid int) {
		if pid == self {
			return
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			return
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					n++
				}
				return
			}
		}
	})
	return n
}
