package gemm

import (
	"math"

	"github.com/xbench/xbench/harness/workload"
)

// dtype is everything the workload knows of one --dtype value, in one row
// so the cost model, fixtures and tolerance cannot disagree about it.
type dtype struct {
	name string
	// inBytes is the storage size of one element of A and B, outBytes of C
	// (float8_e4m3 writes bfloat16; tf32 is stored as float32).
	inBytes, outBytes int
	// tolBase is the accepted relative L2 error at k <= 256 (see Tolerance).
	tolBase float64
	// round maps a float32 to the nearest value the inputs can hold; nil
	// when float32 is the storage type.
	round func(float32) float32
}

var dtypes = []dtype{
	{name: "float32", inBytes: 4, outBytes: 4, tolBase: 1e-5},
	{name: "tf32", inBytes: 4, outBytes: 4, tolBase: 5e-3},
	{name: "bfloat16", inBytes: 2, outBytes: 2, tolBase: 1e-2, round: RoundBF16},
	{name: "float16", inBytes: 2, outBytes: 2, tolBase: 2e-3, round: RoundF16},
	{name: "float8_e4m3", inBytes: 1, outBytes: 2, tolBase: 6e-2, round: RoundE4M3},
}

// dtypeAliases are other spellings --dtype accepts: the short names people
// type and PyTorch's name for e4m3 without infinities.
func dtypeAliases() map[string]string {
	return map[string]string{
		"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16",
		"e4m3": "float8_e4m3", "float8_e4m3fn": "float8_e4m3",
	}
}

// DtypeNames lists the --dtype values in declaration order.
func DtypeNames() []string { return workload.RowNames(dtypes, dtypeName) }

func lookupDtype(name string) (dtype, error) {
	return workload.LookupRow("gemm dtype", dtypes, dtypeName, name)
}

func dtypeName(d dtype) string { return d.name }

// RoundBF16 rounds x to the nearest bfloat16 (8 significant bits, float32's
// exponent range), ties to even; overflow becomes an infinity and NaN stays
// NaN, as in every framework's conversion.
func RoundBF16(x float32) float32 { return float32(roundSig(x, 8, -126)) }

// RoundF16 rounds x to the nearest IEEE binary16 value (11 significant bits,
// subnormals below 2^-14), ties to even; beyond 65504 it is an infinity.
func RoundF16(x float32) float32 {
	r := roundSig(x, 11, -14)
	if math.Abs(r) > 65504 {
		return float32(math.Copysign(math.Inf(1), r))
	}
	return float32(r)
}

// RoundE4M3 rounds x to the nearest OCP float8 e4m3 ("e4m3fn") value: 4
// significant bits, subnormals below 2^-6, largest finite 448, ties to even.
// The format has no infinity, so a value that rounds past 448 is NaN (the
// non-saturating conversion, as PyTorch's). Fixtures never get near it.
func RoundE4M3(x float32) float32 {
	r := roundSig(x, 4, -6)
	if math.Abs(r) > 448 {
		return float32(math.NaN())
	}
	return float32(r)
}

// roundSig rounds x to sig significant bits, ties to even, in a binary
// format whose smallest normal exponent is minExp: below 2^minExp the
// spacing stays 2^(minExp-sig+1), which is how subnormals round. Every step
// is exact in float64 for a float32 x (scaling by powers of two, an integer
// rounding), so the one rounding is the one asked for. A value that rounds
// up into the next binade comes out as that power of two, as it should.
func roundSig(x float32, sig, minExp int) float64 {
	v := float64(x)
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	_, e := math.Frexp(v) // v = f·2^e with |f| in [0.5, 1): the leading bit is 2^(e-1)
	exp := max(e-1, minExp)
	quantum := math.Ldexp(1, exp-(sig-1))
	return math.RoundToEven(v/quantum) * quantum
}
