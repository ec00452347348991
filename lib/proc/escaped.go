package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
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

// killChildren SIGKILLs and reaps every child of this process, over and
// over, until none is left: a dying child's own children are reparented
// to this subreaper before it can be reaped, so each round finds the next
// generation. It returns how many processes it killed. Call it only when
// no other child of this process is expected (no exec.Cmd in flight): it
// reaps whatever it finds. Members of the process group pgid (already
// killed with it) and zombies are reaped but not counted.
func killChildren(pgid int) int {
	killed := 0
	self := os.Getpid()
	for round := 0; round < 1000; round++ {
		kids := childrenOf(self)
		if len(kids) == 0 {
			return killed
		}
		for _, k := range kids {
			if syscall.Kill(k.pid, syscall.SIGKILL) == nil && k.pgrp != pgid && k.state != 'Z' && k.state != 'X' {
				killed++
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
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		fn(pid, data)
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
	eachProcess(func(pid int, _ []byte) {
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
