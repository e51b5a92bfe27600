package plugin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/plugin"
	"github.com/xbench/xbench/harness/subprocess"
)

// roleEnv makes this test binary play a part in the real launch path: the
// plugin process that wraps a JSON-lines program (what `xbench __plugin`
// does), the JSON-lines program itself at some protocol version, or a
// go-plugin binary of another handshake version.
const roleEnv = "XBENCH_PROTOCOL_TEST_ROLE"

func TestMain(m *testing.M) {
	switch role := os.Getenv(roleEnv); {
	case role == "":
		os.Exit(m.Run())
	case strings.HasPrefix(role, "wrap:"):
		self, _ := os.Executable()
		env := append(os.Environ(), roleEnv+"="+strings.TrimPrefix(role, "wrap:"))
		plugin.Serve(subprocess.New([]string{self}, env, "", os.Stderr), hclog.NewNullLogger())
	case role == "handshake-1":
		hs := plugin.Handshake
		hs.ProtocolVersion = 1
		goplugin.Serve(&goplugin.ServeConfig{HandshakeConfig: hs, GRPCServer: goplugin.DefaultGRPCServer,
			Plugins: goplugin.PluginSet{plugin.PluginName: &plugin.GRPCBackendPlugin{}}})
	default:
		serveJSONLines(role)
	}
	os.Exit(0)
}

// serveJSONLines answers info as a backend of the given protocol would:
// "jsonl-1" as protocol 1 did (no "protocol" field, capabilities as lists of
// names), "jsonl-N" with "protocol": N and protocol 2's info object.
func serveJSONLines(role string) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID int    `json:"id"`
			Op string `json:"op"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.Op == "shutdown" {
			return
		}
		var reply string
		switch role {
		case "jsonl-1":
			reply = fmt.Sprintf(`{"id": %d, "info": {"name": "old", "capabilities": {"workloads": ["ttt"], `+
				`"ttt_types": ["linear"], "phases": ["forward"], "dtypes": ["float32"], "devices": ["cpu"]}}}`, req.ID)
		default:
			var v int
			fmt.Sscanf(role, "jsonl-%d", &v)
			reply = fmt.Sprintf(`{"id": %d, "protocol": %d, "info": {"name": "v%d", "capabilities": {"workloads": [`+
				`{"workload": "ttt", "phases": ["forward"], "devices": ["cpu"]}]}}}`, req.ID, v, v)
		}
		fmt.Println(reply)
	}
}

func launch(t *testing.T, role string) (*plugin.Process, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plugin.Launch(context.Background(), "old", []string{self}, []string{roleEnv + "=" + role}, hclog.NewNullLogger())
	if p != nil {
		t.Cleanup(p.Close)
	}
	return p, err
}

// A backend of another protocol version is named as one, through the real
// path (plugin process, gRPC, wrapped program), not as a broken reply.
func TestProtocolMismatchNamesItself(t *testing.T) {
	for _, tc := range []struct {
		role string
		want string // "" for a backend of this protocol
	}{
		{"wrap:jsonl-1", "backend speaks protocol 1, this harness speaks 2: see docs/protocol.md#changes"},
		{"wrap:jsonl-3", "backend speaks protocol 3, this harness speaks 2: see docs/protocol.md#changes"},
		{"wrap:jsonl-2", ""},
		{"handshake-1", `start backend "old": backend speaks protocol 1, this harness speaks 2: see docs/protocol.md#changes`},
	} {
		t.Run(tc.role, func(t *testing.T) {
			p, err := launch(t, tc.role)
			if err == nil {
				var info backend.Info
				info, err = p.Backend.Info(context.Background())
				if err == nil && tc.want == "" && info.Capabilities.Workloads[0].Workload != "ttt" {
					t.Errorf("info came back as %+v", info)
				}
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a backend of this protocol: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			case tc.want != "" && strings.Contains(err.Error(), "not a JSON reply"):
				t.Errorf("the mismatch is still called a broken reply: %v", err)
			}
		})
	}
}
