// Command burnstyle-hip serves the native backend as a go-plugin process:
// xbench finds it through plugins/burnstyle-hip/plugin.json (runtime
// "plugin") and launches it beside itself in bin/. Run alone it only says
// that it is a plugin.
package main

import (
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/xbench/xbench/harness/plugin"
	burnstylehip "github.com/xbench/xbench/plugins/burnstyle-hip"
)

func main() {
	logger := hclog.New(&hclog.LoggerOptions{Name: burnstylehip.Name, Output: os.Stderr, JSONFormat: true, Level: hclog.Trace})
	plugin.Serve(burnstylehip.New(), logger)
}
