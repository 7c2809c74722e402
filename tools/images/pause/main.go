// pause holds a pod's namespaces open for the real-cluster node (scripts/real-cluster.sh):
// it sleeps until SIGINT or SIGTERM and, as PID 1 of a shared PID namespace, reaps
// orphaned children so they do not linger as zombies. Built static by scripts/k8s-tools.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		// Reap every child that has exited; WNOHANG so a live child never blocks us.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
