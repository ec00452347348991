package ui

import (
	"net"
	"net/netip"
	"os"
	"testing"
)

// The kernel's table of connections names both ends of a connection this
// process made, over IPv4 and IPv6, and the client's end is one of this
// process's descriptors; this process is not a session's. A closed
// connection's end is not found held.
func TestPeerLookup(t *testing.T) {
	procs := readProcs()
	if _, ok := procs[os.Getpid()]; !ok {
		t.Fatal("this process is not in the process table")
	}
	if _, in := procs.sessions()[os.Getpid()]; in {
		t.Fatal("this process is taken for a session's")
	}
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network]
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		c, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		client, server := netip.MustParseAddrPort(c.LocalAddr().String()), netip.MustParseAddrPort(s.LocalAddr().String())
		inode, found := socketInode(client, server)
		if !found || inode == "0" || !holds(os.Getpid(), inode, true) {
			t.Fatalf("%s: the client's end %v: inode %q, found %v", network, client, inode, found)
		}
		if other, _ := socketInode(server, client); other == inode {
			t.Fatalf("%s: both ends have inode %s", network, inode)
		}
		c.Close()
		if holds(os.Getpid(), inode, true) {
			t.Fatalf("%s: a closed end is still held", network)
		}
		s.Close()
		ln.Close()
	}
	if _, ok := procAddr("0100007F"); ok {
		t.Fatal("an address without a port parsed")
	}
	if _, ok := procAddr("0100:1F90"); ok {
		t.Fatal("a short address parsed")
	}
}
