// Command kubeplane is the test cluster's control plane in one executable:
// the first argument picks the component, the rest are that component's own
// flags, exactly as upstream's kube-apiserver, kube-controller-manager and
// kube-scheduler commands take them.
//
// One executable instead of four: the components share almost all of their
// code, and linking a Kubernetes binary is the slowest step of a rebuild, so
// one link is several minutes less on a cold build. Each component still runs
// as its own process (scripts/cluster.sh starts one per component), so a crash
// or a log is attributable to one of them, as in a real cluster.
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	_ "time/tzdata" // CronJob time zones, as upstream's binaries embed them

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": func() *cobra.Command { return controllermanager.NewControllerManagerCommand() },
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	name := os.Args[1]
	if name == "free-ports" {
		os.Exit(freePorts(os.Args[2:]))
	}
	newCommand, ok := components[name]
	if !ok {
		usage()
	}
	command := newCommand()
	command.SetArgs(os.Args[2:])
	os.Exit(cli.Run(command))
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kubeplane kube-apiserver|kube-controller-manager|kube-scheduler [FLAGS] | free-ports N")
	os.Exit(2)
}

// freePorts prints n TCP ports on 127.0.0.1 that were free a moment ago, one
// a line: the kernel picks them, so parallel clusters rarely collide, and all
// n are held open together so they are distinct.
func freePorts(args []string) int {
	n := 1
	if len(args) == 1 {
		parsed, err := strconv.Atoi(args[0])
		if err != nil || parsed < 1 || parsed > 64 {
			fmt.Fprintln(os.Stderr, "free-ports: N must be a number from 1 to 64")
			return 2
		}
		n = parsed
	}
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "free-ports:", err)
			return 1
		}
		listeners = append(listeners, l)
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
	}
	return 0
}
