package attention

import (
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/gemm"
)

// dtype is everything the workload knows of one --dtype value, in one row
// so the cost model, fixtures and tolerance cannot disagree about it.
type dtype struct {
	name  string
	bytes int // storage of every tensor, inputs and outputs alike
	// tolForward bounds out in phase forward; tolBackward every tensor
	// (out, dq, dk, dv) in backward and both; both at sequences up to 256
	// (see Tolerance). docs/workloads/attention.md says where the numbers
	// come from.
	tolForward, tolBackward float64
	// round maps a float32 to the nearest value of the storage type; nil
	// when float32 is the storage type.
	round func(float32) float32
}

// The rounding of bfloat16 and float16 is GEMM's: one definition of what
// "exactly representable in the dtype" means for every workload.
var dtypes = []dtype{
	{name: "float32", bytes: 4, tolForward: 1e-5, tolBackward: 2e-5},
	{name: "bfloat16", bytes: 2, tolForward: 2e-2, tolBackward: 3e-2, round: gemm.RoundBF16},
	{name: "float16", bytes: 2, tolForward: 3e-3, tolBackward: 5e-3, round: gemm.RoundF16},
}

func dtypeAliases() map[string]string {
	return map[string]string{"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}
}

// DtypeNames lists the --dtype values in declaration order.
func DtypeNames() []string { return workload.RowNames(dtypes, dtypeName) }

func lookupDtype(name string) (dtype, error) {
	return workload.LookupRow("attention dtype", dtypes, dtypeName, name)
}

func dtypeName(d dtype) string { return d.name }
