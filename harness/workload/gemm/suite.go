package gemm

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/workload"
)

// Bounds of a random suite: at most this many shapes, each dimension drawn
// between randomLo and randomHi.
const (
	maxRandomShapes = 100000
	randomLo        = 16
	randomHi        = 8192
)

func (Workload) SuiteHelp() string {
	return "square (13 m=n=k shapes, 256 to 16384), llm (LLM projection and MLP shapes, layout nt), random:N:SEED, or a CSV file of m,n,k[,batch] rows"
}

// Suite expands --shapes SPEC. A suite sets m, n and k, and only the other
// parameters that define it (llm's layout, a CSV's batch column); the rest
// come from the flags, so `--shapes square --dtype bfloat16 --layout tt` is
// the square suite in bfloat16, stored transposed.
func (Workload) Suite(spec string) ([]map[string]string, error) {
	switch {
	case spec == "square":
		return squareSuite(), nil
	case spec == "llm":
		var out []map[string]string
		for _, s := range llmShapes() {
			sh := shape(s.m, s.n, s.k)
			sh["layout"] = "nt"
			out = append(out, sh)
		}
		return out, nil
	case strings.HasPrefix(spec, "random:"):
		return randomSuite(spec)
	}
	return workload.CSVSuite(Workload{}, spec, []string{"m", "n", "k", "batch"}, 3, "square, llm, random:N:SEED")
}

func shape(m, n, k int) map[string]string {
	return map[string]string{"m": strconv.Itoa(m), "n": strconv.Itoa(n), "k": strconv.Itoa(k)}
}

// squareSuite is m = n = k at every power of two from 256 to 16384 and the
// 1.5× point between each two, smallest first: 13 shapes, dense enough to
// see where a kernel leaves its tile sizes.
func squareSuite() []map[string]string {
	var out []map[string]string
	for p := 256; p <= 16384; p *= 2 {
		out = append(out, shape(p, p, p))
		if p < 16384 {
			mid := p + p/2
			out = append(out, shape(mid, mid, mid))
		}
	}
	return out
}

// randomSuite is "random:N:SEED": N shapes whose m, n, k are each drawn
// log-uniformly from [16, 8192] and rounded to the nearest multiple of 16,
// from a PCG seeded by SEED, so one spec always names the same shapes.
func randomSuite(spec string) ([]map[string]string, error) {
	bad := &workload.ValueError{Flag: "--shapes", Value: spec,
		Allowed: "random:N:SEED with N an integer 1 to " + strconv.Itoa(maxRandomShapes) + " and SEED an integer"}
	f := strings.Split(spec, ":")
	if len(f) != 3 {
		return nil, bad
	}
	count, err := strconv.Atoi(f[1])
	if err != nil || count < 1 || count > maxRandomShapes {
		return nil, bad
	}
	seed, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return nil, bad
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x6765_6d6d)) // the second word is "gemm", fixed
	lo, hi := math.Log(randomLo), math.Log(randomHi)
	draw := func() int {
		v := int(math.Round(math.Exp(lo+(hi-lo)*r.Float64())/16)) * 16
		return min(max(v, randomLo), randomHi)
	}
	out := make([]map[string]string, count)
	for i := range out {
		m, n, k := draw(), draw(), draw() // calls run left to right: m, then n, then k
		out[i] = shape(m, n, k)
	}
	return out, nil
}
