// Command kwok is the test cluster's nodes: kwok's controller, which keeps
// fake Nodes heartbeating and moves Pods through their lifecycle (Running,
// Ready, Succeeded for a Job's pods) without a kubelet or a container runtime.
// It is its own module because kwok is built against a newer Kubernetes
// client release than the control plane.
//
// `kwok stages` prints kwok's own default stages (what kwokctl installs: fast
// node initialisation, lease heartbeat, fast pod ready/complete/delete) for
// `--config`; anything else runs the controller with upstream's flags.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwok/cmd"
	"sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "stages" {
		stages := []string{
			nodefast.DefaultNodeInit,
			nodeheartbeat.DefaultNodeHeartbeatWithLease,
			podfast.DefaultPodReady,
			podfast.DefaultPodComplete,
			podfast.DefaultPodDelete,
		}
		for i, stage := range stages {
			stages[i] = strings.TrimSpace(stage)
		}
		fmt.Println(strings.Join(stages, "\n---\n"))
		return
	}

	// The same start-up as upstream's cmd/kwok.
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}

	ctx := signals.SetupSignalContext()
	ctx, logger := log.InitFlags(ctx, flagset)

	ctx, err := config.InitFlags(ctx, flagset)
	if err != nil {
		_, _ = os.Stderr.Write([]byte(flagset.FlagUsages()))
		logger.Error("Init config flags", "err", err)
		os.Exit(1)
	}

	command := cmd.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(flagset)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		os.Exit(1)
	}
}
