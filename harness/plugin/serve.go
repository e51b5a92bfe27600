package plugin

import (
	"sync"

	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
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

var subreaper sync.Once

// Process is a launched plugin: the backend it serves and the means to stop it.
type Process struct {
	Backend backend.Backend
	client  *goplugin.Client
	pgid    int // the plugin's process group: it and every program it runs
}

// Launch starts argv as a plugin process and connects to its backend. The
// plugin's stderr goes to logger, one line at a time.
func Launch(ctx context.Context, name string, argv, env []string, logger hclog.Logger) (*Process, error) {
	subreaper.Do(func() {
		if err := EnableSubreaper(); err != nil {
			logger.Warn("cannot become a child subreaper: children a backend starts with setsid may outlive it", "error", err)
		}
	})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	// The plugin leads a process group of its own, and the programs it wraps
	// stay in it (harness/subprocess), so one kill of the group ends the
	// whole tree, a hung grandchild included. Pdeathsig ends the plugin if
	// xbench itself dies (kill -9), which no Close would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          goplugin.PluginSet{PluginName: &GRPCBackendPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           logger.Named(name),
		StartTimeout:     2 * time.Minute,
	})
	p := &Process{client: client}
	rpc, err := client.Client()
	if cmd.Process != nil {
		p.pgid = cmd.Process.Pid
		remember(cmd.Process.Pid)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("start backend %q: %w", name, protocolError(err))
	}
	raw, err := rpc.Dispense(PluginName)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("connect to backend %q: %w", name, err)
	}
	b, ok := raw.(backend.Backend)
	if !ok {
		p.Close()
		return nil, fmt.Errorf("backend %q: plugin does not serve the backend contract", name)
	}
	p.Backend = b
	return p, nil
}

// goPluginVersion is how go-plugin words a handshake of another version.
var goPluginVersion = regexp.MustCompile(`(?i)incompatible API version with plugin\. Plugin version: (\d+)`)

// protocolError names a plugin binary of another protocol version the way
// a JSON-lines backend of one is named (backend.ProtocolMismatch), instead
// of go-plugin's "incompatible API version"; other errors pass unchanged.
func protocolError(err error) error {
	m := goPluginVersion.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	v, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return err
	}
	return &backend.ProtocolMismatch{Backend: v, Detail: "go-plugin handshake: " + err.Error()}
}

// Close stops the plugin process, politely first (go-plugin asks it to
// exit, then kills it), then kills what is left of its process group: a
// wrapped program that hangs, or anything it started.
func (p *Process) Close() {
	p.client.Kill()
	if p.pgid > 0 {
		_ = killGroup(p.pgid)
	}
	ReapOrphans()
}

// killGroup sends SIGKILL to every process of group pgid. While any member
// is alive the kernel keeps the id reserved, so it cannot name another group.
func killGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil // nothing left
	}
	return err
}

// Exited reports whether the plugin process has gone away.
func (p *Process) Exited() bool { return p.client.Exited() }
