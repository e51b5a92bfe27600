package subprocess

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

func TestProfile(t *testing.T) {
	answers := `    r = req["request"]
    print(json.dumps({"id": req["id"], "profile": {"status": "ok", "device": {"kind": r["device"], "name": "n", "count": 1},
        "profiler": "p", "time_kind": "host", "kernels": [{"name": "aten::mm", "self_ms": 1.5, "count": r["calls"]}],
        "wall_ms": 2.0, "calls": r["calls"], "trace_path": r["trace_path"]}}), flush=True)
`
	b := New(script(t, answers), os.Environ(), ".", &bytes.Buffer{})
	defer b.Close()
	rep, err := b.Profile(context.Background(), backend.ProfileRequest{Workload: "ttt", Device: "cpu", Calls: 3, TracePath: "/x/t.json"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != result.StatusOK || rep.Calls != 3 || rep.TracePath != "/x/t.json" || len(rep.Kernels) != 1 || rep.Kernels[0].Count != 3 {
		t.Errorf("report %+v", rep)
	}

	for name, body := range map[string]string{
		"predates the op": `    print(json.dumps({"id": req["id"], "error": "unknown op 'profile'; ops: info, run, export, shutdown"}), flush=True)
`,
		"framework without it": `    print(json.dumps({"id": req["id"], "error": "backend t cannot profile"}), flush=True)
`,
	} {
		b := New(script(t, body), os.Environ(), ".", &bytes.Buffer{})
		_, err := b.Profile(context.Background(), backend.ProfileRequest{Device: "cpu"})
		b.Close()
		if !errors.Is(err, backend.ErrCannotProfile) {
			t.Errorf("%s: error %v, want ErrCannotProfile", name, err)
		}
	}

	// A crash under the profiler is a failed report, not an error.
	b = New(script(t, "    sys.exit(3)\n"), os.Environ(), ".", &bytes.Buffer{})
	defer b.Close()
	rep, err = b.Profile(context.Background(), backend.ProfileRequest{Device: "cpu", Calls: 1})
	if err != nil || rep.Status != result.StatusFailed || rep.Message == "" {
		t.Errorf("crash: %+v, %v", rep, err)
	}
}
