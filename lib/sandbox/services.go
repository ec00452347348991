package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ServiceSockets are the sockets of the services that start processes
// outside any session on request: a container engine's (a container that
// mounts the repository outlives the session and writes what the sandbox
// shows read-only) and D-Bus's and systemd's (systemd-run starts a unit).
// A session under bwrap sees /dev/null in their place (connect fails),
// also at the path DOCKER_HOST names, and the user's runtime directory
// ($XDG_RUNTIME_DIR, else /run/user/<uid>: the session bus, a rootless
// engine's socket) empty. In a container they are not mounted at all.
var ServiceSockets = []string{
	"/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock",
	"/run/containerd/containerd.sock", "/run/dbus/system_bus_socket",
	"/var/run/dbus/system_bus_socket", "/run/systemd/private",
}

// serviceCandidates are the user's runtime directory ($XDG_RUNTIME_DIR,
// else /run/user/<uid>) and the service sockets (ServiceSockets and
// DOCKER_HOST's), whether they exist or not.
func serviceCandidates() (runtime string, sockets []string) {
	runtime = os.Getenv("XDG_RUNTIME_DIR")
	if runtime == "" {
		runtime = "/run/user/" + strconv.Itoa(os.Getuid())
	}
	sockets = slices.Clone(ServiceSockets)
	if h, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && filepath.IsAbs(h) {
		sockets = append(sockets, h)
	}
	return runtime, sockets
}

// services are what bwrap hides of the services (serviceCandidates) by
// their real paths, where it mounts: the runtime directory ("" when there
// is none, or it holds the repository at root or lies in a place hidden
// anyway) and the sockets that exist outside it, the repository and the
// hidden places (/tmp, home).
func services(root, home string) (runtime string, sockets []string) {
	hiddenBy := func(p string) bool {
		return within(root, p) || within("/tmp", p) || home != "" && within(home, p)
	}
	rt, candidates := serviceCandidates()
	if real, err := filepath.EvalSymlinks(rt); err == nil && filepath.IsAbs(real) && !hiddenBy(real) && !within(real, root) {
		if st, err := os.Stat(real); err == nil && st.IsDir() {
			runtime = real
		}
	}
	for _, p := range candidates {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || hiddenBy(real) || runtime != "" && within(runtime, real) || slices.Contains(sockets, real) {
			continue
		}
		if st, err := os.Stat(real); err == nil && !st.IsDir() {
			sockets = append(sockets, real)
		}
	}
	return runtime, sockets
}

// showsServices reports whether a readable or writable path (paths) shows
// again what the sandbox hides of the services: holds a service socket or
// the runtime directory, or lies in one, by its name or its real path.
func showsServices(paths []string) bool {
	rt, sockets := serviceCandidates()
	var hidden []string
	for _, h := range append(sockets, rt) {
		hidden = append(hidden, filepath.Clean(h), realPath(h))
	}
	for _, p := range paths {
		for _, q := range []string{filepath.Clean(p), realPath(p)} {
			for _, h := range hidden {
				if within(q, h) || within(h, q) {
					return true
				}
			}
		}
	}
	return false
}
