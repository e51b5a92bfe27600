package plugin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/xbench/xbench/harness/backend"
)

// Serve runs impl as a go-plugin server on this process's stdio. It is
// what `xbench __plugin ...` does in the child process.
func Serve(impl backend.Backend, logger hclog.Logger) {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         goplugin.PluginSet{PluginName: &GRPCBackendPlugin{Impl: impl}},
		GRPCServer:      goplugin.DefaultGRPCServer,
		Logger:          logger,
	})
}

// Process is a launched plugin: the backend it serves and the means to stop it.
type Process struct {
	Backend backend.Backend
	client  *goplugin.Client
}

// Launch starts argv as a plugin process and connects to its backend. The
// plugin's stderr goes to logger, one line at a time.
func Launch(ctx context.Context, name string, argv, env []string, logger hclog.Logger) (*Process, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          goplugin.PluginSet{PluginName: &GRPCBackendPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           logger.Named(name),
		StartTimeout:     2 * time.Minute,
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("start backend %q: %w", name, err)
	}
	raw, err := rpc.Dispense(PluginName)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("connect to backend %q: %w", name, err)
	}
	b, ok := raw.(backend.Backend)
	if !ok {
		client.Kill()
		return nil, fmt.Errorf("backend %q: plugin does not serve the backend contract", name)
	}
	return &Process{Backend: b, client: client}, nil
}

// Close stops the plugin process (and, through it, its children).
func (p *Process) Close() { p.client.Kill() }

// Exited reports whether the plugin process has gone away.
func (p *Process) Exited() bool { return p.client.Exited() }
