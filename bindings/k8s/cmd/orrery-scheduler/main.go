// Command orrery-scheduler is kube-scheduler with the Cassini plugin
// compiled in: run it as a second scheduler (schedulerName in the pods'
// spec) with a KubeSchedulerConfiguration that enables the plugin; see
// bindings/k8s/README.md.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/orrery/orrery/bindings/k8s/cassini"
)

func main() {
	cmd := app.NewSchedulerCommand(app.WithPlugin(cassini.Name, cassini.New))
	os.Exit(cli.Run(cmd))
}
