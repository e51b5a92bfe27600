package gpu

import (
	"os"
	"testing"
)

// TestCUBLASLtSymbols resolves every symbol of the cuBLASLt binding against
// the real library (XBENCH_LIBCUBLASLT; test.sh names the torch wheel's
// libcublasLt.so.13), which needs no GPU, and reads its version.
func TestCUBLASLtSymbols(t *testing.T) {
	if os.Getenv("XBENCH_LIBCUBLASLT") == "" {
		t.Skip("set XBENCH_LIBCUBLASLT to a libcublasLt.so to resolve the binding's symbols")
	}
	b, err := bindCUBLASLt()
	if err != nil {
		t.Fatal(err)
	}
	if v := b.Version(); v < 110000 {
		t.Errorf("%s: version %d, want 11.0 or newer", b.Path, v)
	}
	t.Logf("%s: %s, %d symbols", b.Path, b.LtVersion(), len(b.funcs()))
}
