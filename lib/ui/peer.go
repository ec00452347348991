package ui

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/proc"
)

// Which process sent a request. A session's processes run as the
// operator's user, and with the host's network they reach the server as
// any browser does; what sets them apart is their ancestry: every process
// a session starts stays a descendant of its agent-exec or guard-run
// (child subreapers) and, where sessions get a PID namespace, of its init
// (proc.InitName). The kernel lists every TCP connection of the network
// namespace (/proc/net/tcp, tcp6) with the inode of each end's socket, and
// each process's descriptors (/proc/PID/fd) name the sockets it holds: so
// the server finds who holds the client's end of a request's connection.
//
// A request is refused when a session's process holds that end, and, while
// a session runs, when no process outside a session is seen to hold it (a
// process whose descriptors cannot be read, or a socket handed between a
// session's processes while they are being looked at): what cannot be
// told from a session's is refused. With no session running, or a client
// on another host, nothing is looked up. A session cannot close its end
// to hide: a closed end has no inode, and is refused too.
//
// Not told apart: a container's processes (mode docker), which descend
// from the engine, not from agent-exec; a container sees neither the
// operator's terminal nor their browser, so it never holds the cookie.

// sessionRoots are the names (comm) of the processes whose descendants are
// a session's.
var sessionRoots = map[string]bool{"agent-exec": true, "guard-run": true}

// peerRefusal is why the request r must be refused as possibly sent by a
// session's process, "" when it was not.
func peerRefusal(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return "it came on no connection whose client can be told"
	}
	ours, err1 := netip.ParseAddrPort(local.String())
	peer, err2 := netip.ParseAddrPort(r.RemoteAddr)
	if err1 != nil || err2 != nil {
		return "its client's address cannot be read"
	}
	procs := readProcs()
	session := procs.sessions()
	if len(session) == 0 {
		return ""
	}
	inode, found := socketInode(peer, ours)
	switch {
	case !found:
		return "" // not a connection from this host's network namespace
	case inode == "0":
		return "its client closed the connection before it could be told from a session's process"
	}
	for pid := range session {
		if holds(pid, inode, true) {
			return fmt.Sprintf("it comes from inside a running session (pid %d, a descendant of pid %d): an agent or a guard cannot use runner-ui's writes", pid, session[pid])
		}
	}
	for pid := range procs {
		if _, in := session[pid]; !in && holds(pid, inode, false) {
			return ""
		}
	}
	return "while a session runs, no process outside it is seen to have sent it (cancel with runner-cancel, answer with tree-edit answer, or try again)"
}

// procTable maps each process id to its parent's id, its name and whether
// it starts a session.
type procTable map[int]procInfo

type procInfo struct {
	ppid int
	root bool // a session root: agent-exec, guard-run, a session's init
}

// readProcs reads every process's parent and name from /proc.
func readProcs() procTable {
	ents, _ := os.ReadDir("/proc")
	t := procTable{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscan(s[close+1:], &state, &ppid); err != nil {
			continue
		}
		root := sessionRoots[s[open+1:close]]
		if !root {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			argv0, _, _ := strings.Cut(string(cmd), "\x00")
			root = argv0 == proc.InitName
		}
		t[pid] = procInfo{ppid: ppid, root: root}
	}
	return t
}

// sessions maps each process of a session (a session root's descendant)
// to that root.
func (t procTable) sessions() map[int]int {
	out := map[int]int{}
	for pid := range t {
		for p, n := t[pid].ppid, 0; p > 1 && n < 4096; p, n = t[p].ppid, n+1 {
			info, ok := t[p]
			if !ok {
				break
			}
			if info.root {
				out[pid] = p
				break
			}
		}
	}
	return out
}

// socketInode is the inode of the socket at local in the connection from
// local to remote, from /proc/net/tcp and tcp6; found is false when no
// such connection is listed, inode "0" when its socket is closed.
func socketInode(local, remote netip.AddrPort) (inode string, found bool) {
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 {
				continue
			}
			l, ok1 := procAddr(fs[1])
			r, ok2 := procAddr(fs[2])
			if ok1 && ok2 && sameAddr(l, local) && sameAddr(r, remote) {
				f.Close()
				return fs[9], true
			}
		}
		f.Close()
	}
	return "", false
}

// procAddr parses an address of /proc/net/tcp{,6}: the IP as 32-bit words
// in the host's byte order, in hex, a colon, the port in hex.
func procAddr(s string) (netip.AddrPort, bool) {
	ip, port, ok := strings.Cut(s, ":")
	b, err := hex.DecodeString(ip)
	p, err2 := strconv.ParseUint(port, 16, 16)
	if !ok || err != nil || err2 != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.NativeEndian.Uint32(b[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr, uint16(p)), true
}

func sameAddr(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// holds reports whether process pid has a descriptor on the socket inode;
// with threads, in any of its threads' descriptor tables too (a thread
// may have one of its own).
func holds(pid int, inode string, threads bool) bool {
	dirs := []string{"/proc/" + strconv.Itoa(pid) + "/fd"}
	if threads {
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/fd")
		dirs = append(dirs, tasks...)
	}
	want := "socket:[" + inode + "]"
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if link, err := os.Readlink(dir + "/" + e.Name()); err == nil && link == want {
				return true
			}
		}
	}
	return false
}
