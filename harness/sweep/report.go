package sweep

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/xbench/xbench/harness/export"
	"github.com/xbench/xbench/harness/result"
)

// Statuses in the order reports list them; every one is terminal.
var Statuses = []result.Status{result.StatusOK, result.StatusUnsupported, result.StatusOOM,
	result.StatusFailed, result.StatusTimeout, result.StatusSkipped}

// Snapshot is the folder as reports see it: the finished cells (whichever
// shard wrote them), the files that are not valid cells, and the planned
// cells that have no file yet.
type Snapshot struct {
	Cells   []Entry // valid cells, by backend then cheapest first
	Invalid []Entry
	Pending []Cell // from the last recorded plan
	HasPlan bool   // false: no sweep recorded a plan, pending is unknown
}

// Read takes a snapshot. It needs no lock: cell files appear by rename, so
// a reader sees a whole file or none, while shards are still running.
func Read(f *Folder) (Snapshot, error) {
	entries, err := f.Scan()
	if err != nil {
		return Snapshot{}, err
	}
	plan, err := f.ReadPlan()
	if err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	var cells []Cell
	byKey := map[string]Entry{}
	for key, e := range entries {
		if e.Err != nil {
			snap.Invalid = append(snap.Invalid, e)
			continue
		}
		byKey[key] = e
		cells = append(cells, Cell{Backend: e.Result.Backend, Device: deviceOfKey(key), Config: e.Result.Config})
	}
	Order(cells)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Backend < cells[j].Backend })
	for _, c := range cells {
		snap.Cells = append(snap.Cells, byKey[c.Key()])
	}
	sort.Slice(snap.Invalid, func(i, j int) bool { return snap.Invalid[i].Key < snap.Invalid[j].Key })
	snap.HasPlan = plan != nil
	for _, c := range plan {
		if _, ok := byKey[c.Key()]; !ok {
			snap.Pending = append(snap.Pending, c)
		}
	}
	return snap, nil
}

// WriteStatus prints cell counts by status for each backend.
func WriteStatus(w io.Writer, snap Snapshot) error {
	counts := map[string]map[string]int{}
	add := func(backend, col string) {
		if counts[backend] == nil {
			counts[backend] = map[string]int{}
		}
		counts[backend][col]++
		if counts["total"] == nil {
			counts["total"] = map[string]int{}
		}
		counts["total"][col]++
	}
	for _, e := range snap.Cells {
		add(e.Result.Backend, string(e.Result.Status))
	}
	for _, c := range snap.Pending {
		add(c.Backend, "pending")
	}
	cols := []string{}
	for _, st := range Statuses {
		cols = append(cols, string(st))
	}
	cols = append(cols, "pending")
	var backends []string
	for b := range counts {
		if b != "total" {
			backends = append(backends, b)
		}
	}
	sort.Strings(backends)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\t"+strings.Join(cols, "\t")+"\t")
	for _, b := range append(backends, "total") {
		row := []string{b}
		for _, col := range cols {
			row = append(row, strconv.Itoa(counts[b][col]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	for _, e := range snap.Invalid {
		fmt.Fprintf(w, "invalid cell file (it will be run again): %v\n", e.Err)
	}
	if !snap.HasPlan {
		fmt.Fprintln(w, "(no sweep plan in this folder: pending cells unknown)")
	}
	return nil
}

// WriteCSV prints one row per finished cell, in export's CSV format (one
// definition of the columns for `sweep --csv` and `export --format csv`).
func WriteCSV(w io.Writer, snap Snapshot) error {
	rs := make([]result.Result, len(snap.Cells))
	for i, e := range snap.Cells {
		rs[i] = e.Result
	}
	return export.CSV(w, rs)
}
