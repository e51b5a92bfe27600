package attention

// Attention's own report section: throughput against sequence length,
// one panel per configuration of the other parameters and phase. A
// fixed-token suite lowers batch as seq_len grows, so batch may move with
// seq_len in a panel; a rate per FLOP stays comparable across batches.

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/view"
)

var _ workload.Reporter = Workload{}

// ReportSections is the throughput chart, first among the charts: the
// sweep's main axis.
func (w Workload) ReportSections(v view.Results) []view.Section {
	if c := throughputVsSeqLen(w, v); c != nil {
		return []view.Section{{Place: view.Lead, Chart: c}}
	}
	return nil
}

// seqLenPanel is the configurations of one panel, in the report's order.
type seqLenPanel struct {
	Title       string
	Configs     []result.Config
	BatchVaries bool // batch changes with seq_len (a fixed-token suite)
	SeqLens     []int
}

// seqLenFree are the parameters a panel's configurations may differ in:
// kv_len follows seq_len (its 0 means seq_len), and batch is handled by
// seqLenPanels, since a fixed-token suite lowers it as seq_len grows.
var seqLenFree = []string{"seq_len", "kv_len", "batch"}

// seqLenPanels groups the configurations by phase and every parameter but
// seq_len, kv_len and batch. A group whose lengths each come with one
// batch is one panel (batch follows seq_len); a group that ran some length
// at several batches is split by batch, so no panel has two points at one
// length. Panels with fewer than two lengths are dropped.
func seqLenPanels(cfgs []result.Config) []seqLenPanel {
	type key struct{ phase, params string }
	var keys []key
	groups := map[key][]result.Config{}
	for _, c := range cfgs {
		if c.Get("seq_len") == "" {
			continue
		}
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(c.Params)) {
			if !slices.Contains(seqLenFree, name) {
				parts = append(parts, name+"="+c.Params[name])
			}
		}
		k := key{c.Phase, strings.Join(parts, " ")}
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []seqLenPanel
	for _, k := range keys {
		g := groups[k]
		batches := map[int]map[string]bool{} // seq_len -> batches
		for _, c := range g {
			l := c.Int("seq_len")
			if batches[l] == nil {
				batches[l] = map[string]bool{}
			}
			batches[l][c.Get("batch")] = true
		}
		split := false
		for _, b := range batches {
			split = split || len(b) > 1
		}
		sub := [][]result.Config{g}
		if split {
			sub = nil
			index := map[string]int{}
			for _, c := range g {
				i, ok := index[c.Get("batch")]
				if !ok {
					i = len(sub)
					index[c.Get("batch")] = i
					sub = append(sub, nil)
				}
				sub[i] = append(sub[i], c)
			}
		}
		for _, s := range sub {
			p := seqLenPanel{Configs: s}
			bs := map[string]bool{}
			for _, c := range s {
				if l := c.Int("seq_len"); !slices.Contains(p.SeqLens, l) {
					p.SeqLens = append(p.SeqLens, l)
				}
				bs[c.Get("batch")] = true
			}
			if len(p.SeqLens) < 2 {
				continue
			}
			sort.Ints(p.SeqLens)
			p.BatchVaries = len(bs) > 1
			p.Title = commonLabel(s)
			// The label names only a phase other than the default; a
			// panel beside its backward twin says forward too.
			if !strings.HasSuffix(p.Title, " "+k.phase) {
				p.Title += " " + k.phase
			}
			out = append(out, p)
		}
	}
	return out
}

// commonLabel is the words of the label that every configuration shares
// ("h32/8 d128 causal bfloat16 backward"): what varies is on the x axis.
func commonLabel(cfgs []result.Config) string {
	var words []string
	for i, c := range cfgs {
		ws := strings.Fields(workload.Label(c))
		if i == 0 {
			words = ws
			continue
		}
		words = slices.DeleteFunc(words, func(w string) bool { return !slices.Contains(ws, w) })
	}
	return strings.Join(words, " ")
}
