// Package result holds the one record every backend run produces. The JSON
// Schema in schema/result.schema.json is generated from these types, so the
// Go structs are the single source of truth for the format.
package result

// SchemaVersion changes whenever a field changes meaning or is removed.
const SchemaVersion = 1

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

// Config is the workload configuration; every backend of one run gets the same.
type Config struct {
	Workload  string `json:"workload" jsonschema:"enum=ttt"`
	ModelSize string `json:"model_size" jsonschema:"enum=tiny,enum=125m,enum=350m,enum=760m,enum=1b"`
	TTTType   string `json:"ttt_type" jsonschema:"enum=linear,enum=mlp"`
	Backward  bool   `json:"backward"`
	InnerOnly bool   `json:"inner_only"`
	Batch     int    `json:"batch" jsonschema:"minimum=1"`
	SeqLen    int    `json:"seq_len" jsonschema:"minimum=1"`
	MiniBatch int    `json:"mini_batch" jsonschema:"minimum=1"`
	Dtype     string `json:"dtype" jsonschema:"enum=float32,enum=tf32,enum=bfloat16,enum=float16,enum=float64"`
	Backbone  string `json:"backbone" jsonschema:"enum=transformer,enum=mamba"`
	Warmup    int    `json:"warmup" jsonschema:"minimum=0"`
	Repeats   int    `json:"repeats" jsonschema:"minimum=1"`
}

// Phase names the part of the model a configuration times.
func (c Config) Phase() string {
	switch {
	case c.InnerOnly:
		return "inner_only"
	case c.Backward:
		return "backward"
	default:
		return "forward"
	}
}

// Tokens is the number of tokens one timed call processes.
func (c Config) Tokens() int { return c.Batch * c.SeqLen }

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
	P90Ms       float64 `json:"p90_ms"`
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
	// it: with `sweep --gpus`, the GPU a cell ran on.
	VisibleDevices string `json:"visible_devices,omitempty"`
	Python         string `json:"python,omitempty"`
}

// Result is one backend on one configuration.
type Result struct {
	SchemaVersion   int       `json:"schema_version"`
	RunID           string    `json:"run_id"`
	Backend         string    `json:"backend"`
	Status          Status    `json:"status" jsonschema:"enum=ok,enum=unsupported,enum=oom,enum=failed,enum=timeout,enum=skipped"`
	Message         string    `json:"message,omitempty"`
	Config          Config    `json:"config"`
	Device          Device    `json:"device"`
	SamplesMs       []float64 `json:"samples_ms"`
	CompileMs       float64   `json:"compile_ms" jsonschema:"minimum=0"`
	Stats           *Stats    `json:"stats,omitempty"`
	TokensPerS      float64   `json:"tokens_per_s" jsonschema:"minimum=0"`
	PeakMemoryBytes int64     `json:"peak_memory_bytes" jsonschema:"minimum=0"`
	NumParams       int64     `json:"num_params" jsonschema:"minimum=0"`
	Env             Env       `json:"env"`
	Warnings        []string  `json:"warnings,omitempty"`
	Timestamp       string    `json:"timestamp,omitempty"`
	// Tail keeps the last lines a failing backend printed, for diagnosis.
	Tail string `json:"tail,omitempty"`
}
