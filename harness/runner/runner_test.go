package runner

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"auto", ModeAuto, false},
		{"nix", ModeNix, false},
		{"venv", ModeVenv, false},
		{" NIX ", ModeNix, false},
		{"Venv", ModeVenv, false},
		{"", "", true},
		{"docker", "", true},
		{"nix develop", "", true},
		{"conda", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseMode(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseMode(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if err != nil {
			msg := err.Error()
			for _, part := range []string{"--env", `"` + tt.in + `"`, "auto", "nix", "venv"} {
				if !strings.Contains(msg, part) {
					t.Errorf("ParseMode(%q) error %q does not mention %s", tt.in, msg, part)
				}
			}
		}
	}
}

func TestResolve(t *testing.T) {
	withFlake := t.TempDir()
	if err := os.WriteFile(filepath.Join(withFlake, "flake.nix"), []byte("{ outputs = _: { }; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noFlake := t.TempDir()
	flakeIsDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(flakeIsDir, "flake.nix"), 0o755); err != nil {
		t.Fatal(err)
	}

	hasNix := func(name string) (string, error) {
		if name != "nix" {
			return "", errors.New("unexpected lookup of " + name)
		}
		return "/usr/bin/nix", nil
	}
	noNix := func(name string) (string, error) { return "", errors.New("executable file not found in $PATH") }

	tests := []struct {
		name     string
		mode     Mode
		root     string
		lookPath func(string) (string, error)
		want     Mode
	}{
		{"auto nix and flake", ModeAuto, withFlake, hasNix, ModeNix},
		{"auto nix without flakes enabled", ModeAuto, withFlake, hasNix, ModeVenv},
		{"auto no nix", ModeAuto, withFlake, noNix, ModeVenv},
		{"auto no flake", ModeAuto, noFlake, hasNix, ModeVenv},
		{"auto flake.nix is a directory", ModeAuto, flakeIsDir, hasNix, ModeVenv},
		{"auto neither", ModeAuto, noFlake, noNix, ModeVenv},
		{"nix stays nix without nix", ModeNix, noFlake, noNix, ModeNix},
		{"venv stays venv with nix", ModeVenv, withFlake, hasNix, ModeVenv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := flakesEnabled
			defer func() { flakesEnabled = saved }()
			flakesEnabled = func() bool { return tt.name != "auto nix without flakes enabled" }
			if got := Resolve(tt.mode, tt.root, tt.lookPath); got != tt.want {
				t.Errorf("Resolve(%q, %s) = %q, want %q", tt.mode, tt.root, got, tt.want)
			}
		})
	}
}

func TestFeaturesOn(t *testing.T) {
	tests := []struct {
		conf string
		want bool
	}{
		{"", false},
		{"experimental-features = nix-command flakes", true},
		{"experimental-features = nix-command\nextra-experimental-features = flakes", true},
		{"experimental-features = nix-command", false},
		{"# experimental-features flakes nix-command", false},
	}
	for _, tt := range tests {
		if got := featuresOn(tt.conf, "nix-command", "flakes"); got != tt.want {
			t.Errorf("featuresOn(%q) = %v, want %v", tt.conf, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	noFlake := t.TempDir()
	argv := []string{"python3", "plugins/pytorch/benchmark.py", "--serve"}
	tests := []struct {
		name  string
		mode  Mode
		root  string
		shell string
		want  []string
	}{
		{"nix", ModeNix, "/repo", "bench-pytorch", []string{"nix", "develop", "/repo#bench-pytorch", "--command", "python3", "plugins/pytorch/benchmark.py", "--serve"}},
		{"nix relative root", ModeNix, ".", "bench-jax-rocm", []string{"nix", "develop", ".#bench-jax-rocm", "--command", "python3", "plugins/pytorch/benchmark.py", "--serve"}},
		{"nix no shell means default", ModeNix, "/repo", "", []string{"nix", "develop", "/repo#default", "--command", "python3", "plugins/pytorch/benchmark.py", "--serve"}},
		{"venv unchanged", ModeVenv, "/repo", "bench-pytorch", argv},
		{"auto without flake is venv", ModeAuto, noFlake, "bench-pytorch", argv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]string(nil), argv...)
			got := Wrap(tt.mode, tt.root, tt.shell, in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Wrap = %q, want %q", got, tt.want)
			}
			got[len(got)-1] = "changed"
			if !reflect.DeepEqual(in, argv) {
				t.Errorf("Wrap's result aliases its input: input is now %q", in)
			}
		})
	}
}

func TestPython(t *testing.T) {
	withVenv := t.TempDir()
	venvPy := filepath.Join(withVenv, ".venv", "bin", "python")
	if err := os.MkdirAll(filepath.Dir(venvPy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(venvPy, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Python(withVenv); got != venvPy {
		t.Errorf("Python(with .venv) = %q, want %q", got, venvPy)
	}

	noVenv := t.TempDir()
	if got := Python(noVenv); filepath.Base(got) != "python3" {
		t.Errorf("Python(without .venv) = %q, want python3 from PATH", got)
	}

	if got := PythonFor(ModeNix, withVenv); got != "python3" {
		t.Errorf("PythonFor(nix) = %q, want python3 (the shell's)", got)
	}
	if got := PythonFor(ModeVenv, withVenv); got != venvPy {
		t.Errorf("PythonFor(venv) = %q, want %q", got, venvPy)
	}
}

func TestProvenance(t *testing.T) {
	root := t.TempDir()
	writeLock(t, root, sampleLock)
	tests := []struct {
		mode             Mode
		wantRunner, want string
	}{
		{ModeNix, "nix", "0123456789abcdef0123456789abcdef01234567"},
		{ModeVenv, "venv", ""},
		{ModeAuto, "venv", ""}, // no flake.nix in root, so auto is venv
	}
	for _, tt := range tests {
		r, rev := Provenance(tt.mode, root)
		if r != tt.wantRunner || rev != tt.want {
			t.Errorf("Provenance(%q) = %q, %q; want %q, %q", tt.mode, r, rev, tt.wantRunner, tt.want)
		}
	}
}
