package gemm

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
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
	return csvSuite(spec)
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

// csvSuite reads a CSV file of rows m,n,k or m,n,k,batch. A first row whose
// first field is not a number is a header and skipped; blank lines and
// lines starting with '#' are ignored. Every value is checked here, so an
// error names the file and line rather than one configuration of many.
func csvSuite(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &workload.ValueError{Flag: "--shapes", Value: path,
			Allowed: "square, llm, random:N:SEED, or a readable CSV file of m,n,k[,batch] rows; " + err.Error()}
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#'
	names := []string{"m", "n", "k", "batch"}
	var w Workload
	var out []map[string]string
	for first := true; ; first = false {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--shapes %s: %w", path, err) // a csv.ParseError names the line
		}
		line, _ := r.FieldPos(0)
		if first {
			if _, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64); err != nil {
				continue
			}
		}
		if len(rec) != 3 && len(rec) != 4 {
			return nil, fmt.Errorf("--shapes %s:%d: %d fields, want m,n,k or m,n,k,batch", path, line, len(rec))
		}
		row := map[string]string{}
		for i, v := range rec {
			p, _ := workload.ParamOf(w, names[i])
			c, err := p.Canonical(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("--shapes %s:%d: %w", path, line, err)
			}
			row[names[i]] = c
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--shapes %s: no shapes in the file (want rows m,n,k[,batch])", path)
	}
	return out, nil
}
