package main

// -steptrace: what runs when, on which stream, in one training step (or
// forward) as the timed call runs it (graph replay, both backward streams),
// from the CUPTI kernel records of one sample. The serialized profile
// (Model.Profile) says what each part costs alone; this says how the parts
// overlap: for every inner backward, the wait between the chain's previous
// kernel and its start (SMs it could not get), and how busy the other
// streams were while it ran (the weight-gradient GEMMs it should hide).

import (
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cupti"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// traceVariants are the -steptrace variants by name: the training step
// (or, prefix "fwd", the forward) of linear float32 with these options.
var traceVariants = map[string]gputtt.Options{
	"default":    {},                     // chunked forward, side work in the inner backward's windows, node priorities
	"launchprio": {LaunchPriority: true}, // the graph at one priority
	"asap":       {SideASAP: true},       // side work issued as soon as its operands exist
	"flatfwd":    {Chunks: 1},            // the flat training forward
	"parts1":     {HeadParts: 1},         // dembed in one piece
	"parts3":     {HeadParts: 3},
	"parts12":    {HeadParts: 12},
	"eager":      {Eager: true},          // host launches
	"serial":     {SerialBackward: true}, // no side stream
	"fwd4":       {Chunks: 4},            // the inference forward, 4 chunks
	"fwd1":       {Chunks: 1},            // the flat inference forward
}

// stepTrace times each variant and writes every kernel record of its last
// sample to timeline (CSV), with a summary on stdout.
func stepTrace(d *gpu.Device, variants, timeline, size string, L, repeats int) []map[string]any {
	var f *os.File
	if timeline != "" {
		var err error
		if f, err = os.Create(timeline); err != nil {
			fatal(err)
		}
		defer f.Close()
		fmt.Fprintln(f, "variant,start_us,dur_us,stream,grid,block,smem_kib,name")
	}
	// A record's name is a pointer CUPTI keeps: should the layout be other
	// than cupti.parse reads, the fault is the variant's error, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var rows []map[string]any
	fmt.Printf("\nsteptrace: linear float32 %s B=1 L=%d, %d timed calls after 3 warmup\n", size, L, repeats)
	for _, name := range strings.Split(variants, ",") {
		opt, ok := traceVariants[name]
		if !ok {
			fmt.Printf("%-10s unknown variant (have %v)\n", name, keys(traceVariants))
			continue
		}
		cfg := check.Config(size, "linear", "float32", false, 1, L)
		cfg.Backward = !strings.HasPrefix(name, "fwd")
		row := map[string]any{"variant": name, "backward": cfg.Backward}
		err := safely(func() error {
			m, err := loaded(d, cfg, opt)
			if err != nil {
				return err
			}
			defer m.Close()
			var samples []float64
			var recs []cupti.Record
			for i := 0; i < 3+repeats; i++ {
				ms, err := m.Run()
				if err != nil {
					return err
				}
				if i >= 3 {
					samples = append(samples, ms)
				}
				recs = d.RT.LastRecords
			}
			med, lo := medianMin(samples)
			row["median_ms"], row["min_ms"], row["samples_ms"], row["describe"] = med, lo, samples, m.Describe()
			fmt.Printf("%-10s median %.3f ms  min %.3f  (%d records in the last sample; %s)\n", name, med, lo, len(recs), m.Describe())
			if len(recs) == 0 {
				fmt.Println("   no CUPTI records: no timeline")
				return nil
			}
			row["summary"] = summarize(recs)
			if f != nil {
				writeTimeline(f, name, recs)
			}
			return nil
		})
		if err != nil {
			fmt.Printf("%-10s ERROR %v\n", name, err)
			row["error"] = err.Error()
		}
		rows = append(rows, row)
	}
	return rows
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func sortByStart(recs []cupti.Record) []cupti.Record {
	s := append([]cupti.Record(nil), recs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	return s
}

func writeTimeline(f *os.File, variant string, recs []cupti.Record) {
	s := sortByStart(recs)
	t0 := s[0].Start
	for _, r := range s {
		n := r.Name()
		if len(n) > 60 {
			n = n[:60]
		}
		fmt.Fprintf(f, "%s,%.1f,%.1f,%d,%d,%d,%d,%s\n", variant, float64(r.Start-t0)/1e3, float64(r.End-r.Start)/1e3,
			r.Stream, r.Grid[0]*r.Grid[1]*r.Grid[2], r.Block[0], r.DynSmem>>10, strings.ReplaceAll(n, ",", ";"))
	}
}

// summarize prints and returns the timeline's shape: per stream the busy
// time, and per inner backward its duration, the chain's time since the
// previous one, and how busy the other kernels were meanwhile (graph
// replays run on streams of the driver's own, so streams are not lanes).
func summarize(recs []cupti.Record) map[string]any {
	s := sortByStart(recs)
	t0, t1 := s[0].Start, s[0].End
	busy := map[uint32]float64{}
	for _, r := range s {
		t1 = max(t1, r.End)
		busy[r.Stream] += float64(r.End-r.Start) / 1e6
	}
	fmt.Printf("   span %.3f ms; kernel ms by stream:", float64(t1-t0)/1e6)
	for _, st := range sortedKeys(busy) {
		fmt.Printf(" %d:%.2f", st, busy[st])
	}
	fmt.Println()
	var gaps, dur, others float64
	n := 0
	var first, prevEnd uint64
	for _, r := range s {
		if !strings.Contains(r.Name(), "_bwd") || !strings.Contains(r.Name(), "inner") {
			continue
		}
		gap := 0.0
		if n == 0 {
			first = r.Start
		} else if r.Start > prevEnd {
			gap = float64(r.Start-prevEnd) / 1e3
		}
		o := overlapUs(s, r)
		d := float64(r.End-r.Start) / 1e3
		fmt.Printf("   inner_bwd %2d at %8.1f us: %7.1f us on %d blocks; %6.1f us after the previous one; other kernels busy %5.1f%% of it\n",
			n, float64(r.Start-t0)/1e3, d, r.Grid[0], gap, 100*o/d)
		gaps, dur, others, prevEnd = gaps+gap, dur+d, others+o, r.End
		n++
	}
	sum := map[string]any{"span_ms": float64(t1-t0) / 1e6, "records": len(s)}
	if n > 0 {
		sum["inner_bwd_ms"], sum["between_ms"], sum["overlap_frac"] = dur/1e3, gaps/1e3, others/dur
		sum["to_first_inner_bwd_ms"], sum["after_last_ms"] = float64(first-t0)/1e6, float64(t1-prevEnd)/1e6
		fmt.Printf("   to the first inner_bwd %.2f ms; inner_bwds %.2f ms, between them %.2f ms, after the last %.2f ms; others busy %.0f%% of the inner_bwds\n",
			float64(first-t0)/1e6, dur/1e3, gaps/1e3, float64(t1-prevEnd)/1e6, 100*others/dur)
	}
	return sum
}

// overlapUs is the time (us) during r that at least one other kernel ran.
func overlapUs(s []cupti.Record, r cupti.Record) float64 {
	var iv [][2]uint64
	for _, o := range s {
		if o == r || o.End <= r.Start || o.Start >= r.End {
			continue
		}
		iv = append(iv, [2]uint64{max(o.Start, r.Start), min(o.End, r.End)})
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i][0] < iv[j][0] })
	var tot, end uint64
	for _, x := range iv {
		if x[0] > end {
			end = x[0]
		}
		if x[1] > end {
			tot += x[1] - end
			end = x[1]
		}
	}
	return float64(tot) / 1e3
}

func sortedKeys(m map[uint32]float64) []uint32 {
	var k []uint32
	for s := range m {
		k = append(k, s)
	}
	sort.Slice(k, func(i, j int) bool { return k[i] < k[j] })
	return k
}
