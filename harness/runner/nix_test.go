package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// requireNixInstantiate returns the path of nix-instantiate. Without it the
// test is skipped, or fails when XBENCH_REQUIRE_NIX=1 (as in CI, where
// scripts/check-nix.sh installs Debian's nix-bin).
func requireNixInstantiate(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("nix-instantiate")
	if err != nil {
		if os.Getenv("XBENCH_REQUIRE_NIX") == "1" {
			t.Fatalf("XBENCH_REQUIRE_NIX=1 but nix-instantiate is not on PATH (install nix-bin, or run scripts/check-nix.sh): %v", err)
		}
		t.Skip("nix-instantiate not on PATH; set XBENCH_REQUIRE_NIX=1 to make this a failure")
	}
	return p
}

// nixFiles lists flake.nix and every .nix file under nix/.
func nixFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{filepath.Join(root, "flake.nix")}
	err := filepath.WalkDir(filepath.Join(root, "nix"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".nix") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestNixFilesParse(t *testing.T) {
	nixInst := requireNixInstantiate(t)
	root := repoRoot(t)
	files := nixFiles(t, root)
	for _, want := range []string{"flake.nix", "nix/shells.nix", "nix/python.nix"} {
		found := false
		for _, f := range files {
			if strings.HasSuffix(f, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is missing", want)
		}
	}
	for _, f := range files {
		out, err := exec.Command(nixInst, "--parse", f).CombinedOutput()
		if err != nil {
			t.Errorf("nix-instantiate --parse %s: %v\n%s", f, err, out)
		}
	}
}

type stubShell struct {
	XBenchShell string     `json:"XBENCH_SHELL"`
	XBenchAccel string     `json:"XBENCH_ACCEL"`
	ROCmPath    *string    `json:"ROCM_PATH"`
	Prealloc    *string    `json:"XLA_PYTHON_CLIENT_PREALLOCATE"`
	HSAOverride *string    `json:"HSA_OVERRIDE_GFX_VERSION"`
	GoToolchain string     `json:"GOTOOLCHAIN"`
	Packages    []string   `json:"packages"`
	Python      [][]string `json:"python"`
	ShellHook   string     `json:"shellHook"`
}

type stubSystem struct {
	ShellNames []string             `json:"shellNames"`
	Shells     map[string]stubShell `json:"shells"`
}

// evalStub evaluates the flake's devShells against the stand-in nixpkgs of
// nix/check/stub-nixpkgs.nix (see nix/check/stub-eval.nix). Package names
// carry the accelerator the stand-in was configured for ("torch-cuda"), so
// a shell wired to the wrong nixpkgs instance shows.
func evalStub(t *testing.T) map[string]stubSystem {
	t.Helper()
	nixInst := requireNixInstantiate(t)
	root := repoRoot(t)
	cmd := exec.Command(nixInst, "--eval", "--strict", "--json", filepath.Join(root, "nix", "check", "stub-eval.nix"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nix-instantiate --eval nix/check/stub-eval.nix: %v\n%s", err, stderr.String())
	}
	var systems map[string]stubSystem
	if err := json.Unmarshal(out, &systems); err != nil {
		t.Fatalf("stub evaluation output: %v\n%s", err, out)
	}
	return systems
}

func keys(m map[string]stubShell) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The shells the flake outputs, evaluated against a stand-in nixpkgs: the
// names match FlakeShells on each system, each shell got the nixpkgs instance
// of its accelerator, and each has the environment its backend needs.
func TestShellsStubEval(t *testing.T) {
	systems := evalStub(t)
	names, err := FlakeShells(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var cudaOnly []string
	for _, n := range names {
		if !strings.HasSuffix(n, "-rocm") {
			cudaOnly = append(cudaOnly, n)
		}
	}
	wantBySystem := map[string][]string{"x86_64-linux": names, "aarch64-linux": cudaOnly}
	for sys, want := range wantBySystem {
		s, ok := systems[sys]
		if !ok {
			t.Errorf("stub evaluation has no %s", sys)
			continue
		}
		if !reflect.DeepEqual(s.ShellNames, names) {
			t.Errorf("%s: shellNames evaluates to %q, FlakeShells read %q", sys, s.ShellNames, names)
		}
		if got := keys(s.Shells); !reflect.DeepEqual(got, sorted(want)) {
			t.Errorf("%s: shells %q, want %q", sys, got, sorted(want))
		}
	}

	for name, sh := range systems["x86_64-linux"].Shells {
		rocm := strings.HasSuffix(name, "-rocm")
		backend := strings.TrimSuffix(name, "-rocm")
		var python []string
		if len(sh.Python) > 0 {
			python = sh.Python[0]
		}
		if sh.XBenchShell != name {
			t.Errorf("%s: XBENCH_SHELL = %q", name, sh.XBenchShell)
		}
		if !contains(sh.Packages, "go") {
			t.Errorf("%s: no Go among %q", name, sh.Packages)
		}
		if sh.GoToolchain != "local" {
			t.Errorf("%s: GOTOOLCHAIN = %q, want local", name, sh.GoToolchain)
		}
		if sh.HSAOverride != nil {
			t.Errorf("%s: sets HSA_OVERRIDE_GFX_VERSION unconditionally; it must be opt-in", name)
		}
		if rocm {
			if sh.XBenchAccel != "rocm" || sh.ROCmPath == nil || *sh.ROCmPath == "" {
				t.Errorf("%s: XBENCH_ACCEL = %q, ROCM_PATH = %v; want rocm and a path", name, sh.XBenchAccel, sh.ROCmPath)
			}
		} else if sh.XBenchAccel != "cuda" || sh.ROCmPath != nil {
			t.Errorf("%s: XBENCH_ACCEL = %q, ROCM_PATH set = %v; want cuda and no ROCM_PATH", name, sh.XBenchAccel, sh.ROCmPath != nil)
		}
		isJax := backend == "bench-jax"
		if isJax != (sh.Prealloc != nil && *sh.Prealloc == "false") {
			t.Errorf("%s: XLA_PYTHON_CLIENT_PREALLOCATE = %v; want \"false\" exactly in the jax shells", name, sh.Prealloc)
		}
		accel := "cuda"
		if rocm {
			accel = "rocm"
		}
		var wantPy []string
		switch backend {
		case "default":
		case "bench-pytorch":
			wantPy = []string{"torch-" + accel, "numpy", "jsonschema", "safetensors"}
		case "bench-jax":
			wantPy = []string{"jax-" + accel, "jaxlib-" + accel, "numpy", "jsonschema", "safetensors"}
		case "bench-kernels":
			triton := "triton-" + accel
			if accel == "cuda" {
				triton = "triton-cuda"
			}
			wantPy = []string{"torch-" + accel, triton, "numpy", "jsonschema", "safetensors"}
		case "bench-iree":
			// PyPI's wheels, one build for both accelerators (the runtime
			// dlopens the driver library)
			wantPy = []string{"iree-base-runtime", "iree-base-compiler", "ml-dtypes", "numpy", "jsonschema", "safetensors"}
		default:
			t.Errorf("%s: unknown backend %q", name, backend)
		}
		if got := sorted(python); !reflect.DeepEqual(got, sorted(wantPy)) {
			t.Errorf("%s: Python packages %q, want %q", name, got, sorted(wantPy))
		}
	}
}

// The shell hooks print to stderr only (stdout is the backend's JSON-lines
// channel), and set HSA_OVERRIDE_GFX_VERSION only in ROCm shells and only
// from XBENCH_HSA_OVERRIDE.
func TestShellHooks(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	systems := evalStub(t)
	baseEnv := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HSA_OVERRIDE_GFX_VERSION=") || strings.HasPrefix(kv, "XBENCH_") {
			continue
		}
		baseEnv = append(baseEnv, kv)
	}
	cases := []struct {
		override string // "" = unset
		wantROCm string
	}{
		{"", ""},
		{"11.0.0", "11.0.0"},
		{"10.3.0", "10.3.0"},
		{"11.0", ""},
		{"11.0.0; echo pwned", ""},
	}
	for name, sh := range systems["x86_64-linux"].Shells {
		for _, c := range cases {
			outFile := filepath.Join(t.TempDir(), "hsa")
			script := sh.ShellHook + "\nprintf '%s' \"${HSA_OVERRIDE_GFX_VERSION-}\" > \"$XB_TEST_OUT\"\n"
			cmd := exec.Command(bash, "-euc", script)
			cmd.Env = append(append([]string(nil), baseEnv...), "XB_TEST_OUT="+outFile)
			if c.override != "" {
				cmd.Env = append(cmd.Env, "XBENCH_HSA_OVERRIDE="+c.override)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("%s (override %q): hook failed: %v\n%s", name, c.override, err, stderr.String())
				continue
			}
			if stdout.Len() != 0 {
				t.Errorf("%s: hook wrote to stdout: %q", name, stdout.String())
			}
			if !strings.Contains(stderr.String(), "dev shell '"+name+"'") {
				t.Errorf("%s: hook does not say which shell this is; stderr: %q", name, stderr.String())
			}
			got, err := os.ReadFile(outFile)
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if strings.HasSuffix(name, "-rocm") {
				want = c.wantROCm
			}
			if string(got) != want {
				t.Errorf("%s with XBENCH_HSA_OVERRIDE=%q: HSA_OVERRIDE_GFX_VERSION = %q, want %q", name, c.override, got, want)
			}
		}
	}
}

// Wrap's argv, run through the stand-in nix of testdata/fake-nix, reaches the
// command, and the stand-in logs what nix would have been asked.
func TestWrapThroughFakeNix(t *testing.T) {
	root := repoRoot(t)
	fakeDir, err := filepath.Abs(filepath.Join("testdata", "fake-nix"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fakeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	logPath := filepath.Join(t.TempDir(), "nix.log")
	t.Setenv("FAKE_NIX_LOG", logPath)

	argv := Wrap(ModeNix, root, "bench-pytorch", []string{"sh", "-c", `echo hi; echo "shell=$XBENCH_SHELL" >&2`})
	cmd := exec.Command(argv[0], argv[1:]...)
	if want := filepath.Join(fakeDir, "nix"); cmd.Path != want {
		t.Fatalf("nix resolved to %s, want the stand-in %s", cmd.Path, want)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, stderr.String())
	}
	if stdout.String() != "hi\n" {
		t.Errorf("stdout = %q, want %q", stdout.String(), "hi\n")
	}
	if !strings.Contains(stderr.String(), "shell=bench-pytorch") {
		t.Errorf("command did not see XBENCH_SHELL=bench-pytorch; stderr %q", stderr.String())
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	wantLog := "develop " + root + "#bench-pytorch --command sh -c echo hi; echo \"shell=$XBENCH_SHELL\" >&2\n"
	if string(log) != wantLog {
		t.Errorf("log = %q, want %q", log, wantLog)
	}

	// The command's exit status comes through.
	argv = Wrap(ModeNix, root, "bench-jax", []string{"sh", "-c", "exit 3"})
	var exitErr *exec.ExitError
	if err := exec.Command(argv[0], argv[1:]...).Run(); !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("exit status through the stand-in: %v, want 3", err)
	}

	// Arguments of the wrong shape are refused with status 2.
	for _, bad := range [][]string{
		{"build", root + "#bench-jax", "--command", "true"},
		{"develop", root, "--command", "true"},
		{"develop", root + "#bench-jax", "--", "true"},
		{"develop", root + "#bench-jax", "--command"},
	} {
		cmd := exec.Command("nix", bad...)
		var se bytes.Buffer
		cmd.Stderr = &se
		err := cmd.Run()
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(se.String(), "fake-nix:") {
			t.Errorf("stand-in nix %q: err %v, stderr %q; want exit 2 with a fake-nix message", bad, err, se.String())
		}
	}
	log, _ = os.ReadFile(logPath)
	if n := strings.Count(string(log), "\n"); n != 6 {
		t.Errorf("log has %d lines, want 6 (one per call):\n%s", n, log)
	}
}
