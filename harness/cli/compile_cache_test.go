package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestCompileCacheSetsTheFrameworksCaches(t *testing.T) {
	for k := range compileCacheVars("x") {
		t.Setenv(k, "") // restored after the test
	}
	dir := filepath.Join(t.TempDir(), "cache")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--compile-cache", file}, "--compile-cache"},
		{[]string{"--compile-cache", ""}, "is empty"},
		{[]string{"--compile-cache", dir}, ""},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var c commonFlags
		c.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := c.check()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for k, want := range map[string]string{"JAX_COMPILATION_CACHE_DIR": filepath.Join(dir, "jax"),
			"TORCHINDUCTOR_CACHE_DIR": filepath.Join(dir, "inductor"), "TRITON_CACHE_DIR": filepath.Join(dir, "triton")} {
			if got := os.Getenv(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Errorf("cache folder not created: %v", err)
		}
		if s := compileCacheSetting(); s["compile_cache"] != dir {
			t.Errorf("env.settings %v, want compile_cache %s", s, dir)
		}
	}
}
