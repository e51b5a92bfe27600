// Package view is what a workload may add to a report of its own, as plain
// data: tables and chart descriptions, and the read-only view of the
// results it reads to make them. The workload decides what to show (which
// parameters, groupings and derived quantities); harness/report decides
// how to draw it. It imports no plotting library, because the workload
// packages that use it are linked into native plugin binaries, which must
// stay free of gonum/plot.
package view

import "github.com/xbench/xbench/harness/result"

// Results is the part of a report a workload reads. Configs holds only
// the asking workload's configurations, in the report's order.
type Results interface {
	// Backends in the report's order; a series named by a backend gets
	// its colour from this order, so every chart of a page agrees.
	Backends() []string
	// Baseline is the backend ratios are taken against ("" when none).
	Baseline() string
	Configs() []result.Config
	Result(backend string, c result.Config) (result.Result, bool)
	// Median is backend's median ms on c, NaN without an ok result.
	Median(backend string, c result.Config) float64
	// Interval is the 95% interval (ms) of that median, NaN when none.
	Interval(backend string, c result.Config) (lo, hi float64)
	// MatmulPeak is the calibrated matmul TFLOP/s of dev for dtype, 0
	// when the folder has no calibration of it.
	MatmulPeak(dev result.Device, dtype string) float64
}

// MaxPanels bounds the small multiples of one figure; the report draws no
// more, and a workload whose caption sums over its panels stops there too.
const MaxPanels = 12

// Place says where in the page a workload's chart goes, relative to the
// charts every workload gets. The three places are where each workload's
// charts stood before they moved here, so committed reports keep their
// order.
type Place int

const (
	// Lead: before the generic comparisons (the workload's own view of
	// its main axes: time against length, throughput against size).
	Lead Place = iota
	// AfterGrids: after the per-configuration heat maps, before the
	// roofline (aggregates over many shapes).
	AfterGrids
	// Tail: after every generic chart (detailed analyses).
	Tail
)

// Section is one table or one chart a workload adds to its report.
type Section struct {
	Place Place
	Chart *Chart
	Table *Table
	// ReplacesGrid says this chart summarizes so many configurations
	// that the per-configuration heat maps are drawn only for small
	// folders (a GEMM sweep has hundreds of shapes).
	ReplacesGrid bool
}

// Table is a table of the report's CSVs, also shown folded in the page.
type Table struct {
	Name, Title string
	Header      []string
	Rows        [][]Cell
}

// Cell is text, or a number the report formats (every digit in the CSV,
// four in the page and the PDF).
type Cell struct {
	Text  string
	Num   float64
	IsNum bool
}

// Text is a cell of text.
func Text(s string) Cell { return Cell{Text: s} }

// Num is a cell of a number (NaN prints as not applicable).
func Num(x float64) Cell { return Cell{Num: x, IsNum: true} }

// Chart is one figure: panels two to a row, or one panel at a size of its
// own when Width and Height (inches) are set.
type Chart struct {
	Name, Title, Caption string
	Panels               []Panel
	// Cut is how many panels were left out; the caption then says so.
	Cut           int
	Width, Height float64
}

// Panel is one plot: lines (or points), grouped bars, or a heat map.
type Panel struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// XTicks, when set, are the only x ticks; XTickLabels name them.
	XTicks      []float64
	XTickLabels []string
	// YFromZero fixes a linear y axis from 0 to YMax, labelled at round
	// values; Peak, when above 0, reads each label as percent of it too.
	YFromZero  bool
	YMax, Peak float64
	Lines      []Series
	Bars       *Bars
	Grid       *Grid
}

// Series is one backend's line; Name is the backend, which picks its
// colour (and, with Marker, its glyph too).
type Series struct {
	Name         string
	X, Y, Lo, Hi []float64 // Lo, Hi: the 95% band, NaN where none
	PointsOnly   bool      // a scatter, no connecting line
	Marker       bool      // a glyph per backend, not one for all
	// Configs, when as long as X, is the configuration each point was
	// measured on, so the report can mark each point by how it was
	// verified.
	Configs []result.Config
}

// Bars is a grouped bar chart: a value per category for each backend.
type Bars struct {
	Categories []string
	Groups     []BarGroup
}

// BarGroup is one backend's bars (its Name picks the colour).
type BarGroup struct {
	Name   string
	Values []float64
}

// Grid is a heat map of ratios: Rows[i] by Cols[j] holds Cells[i][j].
type Grid struct {
	Rows, Cols []string
	Cells      [][]GridCell
	// FitColumns wraps the column labels to the figure's width.
	FitColumns bool
}

// GridCell is a ratio coloured on the diverging scale (Ratio > 0), or text
// alone; Shaded greys a cell without a value.
type GridCell struct {
	Ratio  float64
	Text   string
	Shaded bool
}
