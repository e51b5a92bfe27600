// Package result holds the one record every backend run produces. The JSON
// Schema in schema/result.schema.json is generated from these types, so the
// Go structs are the single source of truth for the format.
package result

import (
	"maps"
	"strconv"
)

// SchemaVersion changes whenever a field changes meaning or is removed.
const SchemaVersion = 2

// Status says how a run ended.
type Status string

const (
	StatusOK          Status = "ok"
	StatusUnsupported Status = "unsupported"
	StatusOOM         Status = "oom"
	StatusFailed      Status = "failed"
	StatusTimeout     Status = "timeout"
	StatusSkipped     Status = "skipped"
)

// Config is one configuration of one workload; every backend of one run gets
// the same. Params holds the workload's parameters as key/value pairs in
// their canonical spelling (the way benchfmt keys a benchmark), so the
// harness core never names a workload's parameters; harness/workload
// declares and validates them. Integers travel as decimal strings, so no
// layer can cut them to 32 bits.
type Config struct {
	Workload string            `json:"workload" jsonschema:"minLength=1"`
	Phase    string            `json:"phase" jsonschema:"enum=forward,enum=backward,enum=both,enum=inner_only"`
	Params   map[string]string `json:"params"`
	Warmup   int               `json:"warmup" jsonschema:"minimum=0"`
	Repeats  int               `json:"repeats" jsonschema:"minimum=1"`
}

// Get returns one parameter ("" when absent).
func (c Config) Get(key string) string { return c.Params[key] }

// Int returns an integer parameter (0 when absent or not an integer: the
// harness validated it at the boundary).
func (c Config) Int(key string) int {
	n, _ := strconv.ParseInt(c.Params[key], 10, 64)
	return int(n)
}

// Dtype is the "dtype" parameter every workload declares.
func (c Config) Dtype() string { return c.Params["dtype"] }

// With returns a copy of c with one parameter set (the map is copied, so
// configurations never share it).
func (c Config) With(key, value string) Config {
	out := c.Clone()
	if out.Params == nil {
		out.Params = map[string]string{}
	}
	out.Params[key] = value
	return out
}

// Clone returns a copy that shares no map with c.
func (c Config) Clone() Config {
	out := c
	out.Params = maps.Clone(c.Params)
	return out
}

// SameParams says whether two configurations have the same parameters.
func (c Config) SameParams(o Config) bool {
	return maps.Equal(c.Params, o.Params)
}

// Device describes where a backend actually ran (not what was asked for).
type Device struct {
	Kind   string `json:"kind" jsonschema:"enum=cpu,enum=cuda,enum=rocm"`
	Name   string `json:"name"`
	Driver string `json:"driver,omitempty"`
	Count  int    `json:"count" jsonschema:"minimum=0"`
}

// Stats summarises SamplesMs. Only the harness fills it, so every backend is
// summarised by the same code.
type Stats struct {
	MedianMs    float64 `json:"median_ms"`
	MeanMs      float64 `json:"mean_ms"`
	StdMs       float64 `json:"std_ms"`
	MinMs       float64 `json:"min_ms"`
	MaxMs       float64 `json:"max_ms"`
	P10Ms       float64 `json:"p10_ms"`
	P50Ms       float64 `json:"p50_ms,omitempty"`
	P90Ms       float64 `json:"p90_ms"`
	P99Ms       float64 `json:"p99_ms,omitempty"` // only from stats.MinP99Samples samples on
	CI95LowMs   float64 `json:"ci95_low_ms"`
	CI95HighMs  float64 `json:"ci95_high_ms"`
	CV          float64 `json:"cv"`
	CIMethod    string  `json:"ci_method,omitempty"`
	SampleCount int     `json:"n"`
}

// Env records what produced a result, so someone else can get it again.
type Env struct {
	Framework string            `json:"framework"`
	Versions  map[string]string `json:"versions,omitempty"`
	Host      string            `json:"host,omitempty"`
	GitCommit string            `json:"git_commit,omitempty"`
	Timing    string            `json:"timing"`
	Runner    string            `json:"runner,omitempty"`
	NixRev    string            `json:"nix_rev,omitempty"`
	// VisibleDevices is CUDA_VISIBLE_DEVICES (or HIP's) as the backend saw
	// it: with `sweep --gpus` or `--device cuda:N`/`rocm:N`, the physical
	// GPU a cell ran on (the backend itself saw it as device 0).
	VisibleDevices string `json:"visible_devices,omitempty"`
	Python         string `json:"python,omitempty"`
	// Settings are environment settings the harness ran the backend under
	// for stability (ROCm's HSA_ENABLE_SDMA=0, core dumps off), by name.
	Settings map[string]string `json:"settings,omitempty"`
}

// Result is one backend on one configuration.
type Result struct {
	SchemaVersion int       `json:"schema_version"`
	RunID         string    `json:"run_id"`
	Backend       string    `json:"backend"`
	Status        Status    `json:"status" jsonschema:"enum=ok,enum=unsupported,enum=oom,enum=failed,enum=timeout,enum=skipped"`
	Message       string    `json:"message,omitempty"`
	Config        Config    `json:"config"`
	Device        Device    `json:"device"`
	SamplesMs     []float64 `json:"samples_ms"`
	CompileMs     float64   `json:"compile_ms" jsonschema:"minimum=0"`
	Stats         *Stats    `json:"stats,omitempty"`
	// Throughput is the workload's headline rate at the median (tokens/s,
	// TFLOP/s, ...), in ThroughputUnit; only the harness fills it.
	Throughput      float64 `json:"throughput" jsonschema:"minimum=0"`
	ThroughputUnit  string  `json:"throughput_unit,omitempty"`
	PeakMemoryBytes int64   `json:"peak_memory_bytes" jsonschema:"minimum=0"`
	NumParams       int64   `json:"num_params" jsonschema:"minimum=0"`
	// MemoryBytes is what a backend accounts for of the call's memory, by
	// part ("inputs", "state", "workspace", "outputs"): counted from the
	// sizes it allocated, beside the measured PeakMemoryBytes.
	MemoryBytes map[string]int64 `json:"memory_bytes,omitempty"`
	Env         Env              `json:"env"`
	// Mode is how the samples were timed (cold cache, CUDA graph); absent
	// means warm and eager. Results of different modes never pair.
	Mode      Mode     `json:"mode,omitzero"`
	Warnings  []string `json:"warnings,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	// Tail keeps the last lines a failing backend printed, for diagnosis.
	Tail string `json:"tail,omitempty"`
}
