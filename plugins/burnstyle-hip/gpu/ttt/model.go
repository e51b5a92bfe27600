package ttt

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Options tune a model; the zero value is the measured default.
type Options struct {
	InnerThreads int  // threads per inner-loop block; 0 picks (XBENCH_GPU_INNER_THREADS overrides)
	InnerVariant int  // linear kernel layout: 0 picks, 2 row groups, 1 phase per barrier, 3 cluster (XBENCH_GPU_INNER_VARIANT)
	ClusterSize  int  // variant 3: CTAs per head; 0 is 4 (XBENCH_GPU_CLUSTER)
	Exchange     int  // variant 3's cross-CTA exchange: 1 two cluster barriers a step, 2 one, 3 st.async point to point; 0 picks (XBENCH_GPU_EXCHANGE)
	BwdVariant   int  // linear inner backward: 0 picks, 1 one block per head, 2 the forward's cluster (XBENCH_GPU_BWD_VARIANT)
	OnePassStats bool // row statistics in one reduction round (variant 2; XBENCH_GPU_ONEPASS=1)
	Unroll       int  // unroll depth of variant 2's product loop; 0 is 2 (XBENCH_GPU_UNROLL)
	OwnGEMM      bool // portable GEMM kernels even where cuBLAS is loaded (XBENCH_GPU_GEMM=own)
	DefaultMath  bool // float32 cuBLAS in default math instead of pedantic (never TF32 either way)
	Chunks       int  // forward: chunks per sequence of the wavefront; 0 picks, 1 is flat (XBENCH_GPU_CHUNKS)
	FlatPriority bool // chunk lanes at one stream priority (XBENCH_GPU_PRIORITY=flat)
	Eager        bool // launch every kernel of a forward from the host, no graph replay (XBENCH_GPU_GRAPH=0)
	BwdThreads   int  // training step: threads of the inner backward block; 0 picks (XBENCH_GPU_BWD_THREADS)
	// LaunchPriority replays a graph at its launch stream's priority instead
	// of each lane's own (XBENCH_GPU_NODE_PRIORITY=0; graph.go).
	LaunchPriority bool
	SerialBackward bool // training step: the backward on one stream, no side stream (XBENCH_GPU_OVERLAP=0)
	SideASAP       bool // training step: dW products issued when their operands exist, not in the inner backward's window (XBENCH_GPU_SIDE=asap)
	HeadParts      int  // training step: row parts of the tied head's dembed spread over windows; 0 picks (XBENCH_GPU_HEAD_PARTS)
	// Shape, when set, is the model's dimensions instead of those of
	// cfg.ModelSize: the tests run a named size's widths (its kernels'
	// code paths) with fewer layers and a smaller vocabulary.
	Shape *ttt.Size
}

// Model is one configuration's weights, buffers and compiled kernels on one
// device. Methods are safe to call from any goroutine, one at a time.
type Model struct {
	dev  *gpu.Device
	cfg  ttt.Config
	size ttt.Size
	geo  geometry
	opt  Options

	mod        uintptr
	fn         map[string]uintptr
	compileMs  float64
	innerRegs  int
	innerLocal int

	allocs    []gpu.Ptr
	bytes     int64
	sampler   *gpu.Sampler // Run's samples: the runtime's timing loop, one sample a call
	haveInput bool

	w    weights
	buf  buffers
	prof *profiler // set only inside Profile

	train    *train   // nil: forward only (train_buffers.go)
	chunks   *chunked // nil: the flat forward
	laneBLAS uintptr  // cuBLAS handle of the lane being enqueued; 0 is the device's
	base     uintptr  // the stream work goes to outside a lane: 0, or the capture's (graph.go)
	cap      *gpu.Captured
}

// Supports says why cfg cannot run on the GPU, or nil when it can.
func Supports(cfg ttt.Config) error {
	switch {
	case cfg.Backbone != "" && cfg.Backbone != "transformer" && cfg.Backbone != "mamba":
		return fmt.Errorf("backbone %q: the GPU path builds transformer and mamba", cfg.Backbone)
	case cfg.Dtype != "float32" && cfg.Dtype != "bfloat16":
		return fmt.Errorf("dtype %q: the GPU path runs float32 and bfloat16", cfg.Dtype)
	case cfg.TTTType != "linear" && cfg.TTTType != "mlp":
		return fmt.Errorf("ttt type %q: want linear or mlp", cfg.TTTType)
	case cfg.Batch < 1 || cfg.SeqLen < 1 || cfg.MiniBatch < 1 || cfg.SeqLen%cfg.MiniBatch != 0:
		return fmt.Errorf("batch %d, seq_len %d, mini_batch %d: need positive sizes and seq_len a multiple of mini_batch",
			cfg.Batch, cfg.SeqLen, cfg.MiniBatch)
	}
	return nil
}

// NewModel uploads weights and compiles the kernels for cfg.
func NewModel(d *gpu.Device, cfg ttt.Config, weights map[string]tensorfile.Tensor) (*Model, error) {
	return NewModelWith(d, cfg, weights, Options{})
}

// NewModelWith is NewModel with explicit options.
func NewModelWith(d *gpu.Device, cfg ttt.Config, weights map[string]tensorfile.Tensor, opt Options) (*Model, error) {
	if err := Supports(cfg); err != nil {
		return nil, err
	}
	opt = withEnv(opt)
	geo, size, err := geometryFor(cfg, opt, d.RT.Clusters())
	if err != nil {
		return nil, err
	}
	m := &Model{dev: d, cfg: cfg, size: size, geo: geo, opt: opt, fn: map[string]uintptr{}}
	if err := m.trainSupported(); err != nil {
		return nil, err
	}
	if need := m.geo.smemBytes(); need > d.RT.MaxDynSmem {
		return nil, fmt.Errorf("gpu: the %s inner kernel at f=%d, mini_batch=%d needs %d bytes of shared memory; %s allows %d per block",
			cfg.TTTType, size.HeadDim, cfg.MiniBatch, need, d.Info().Name, d.RT.MaxDynSmem)
	}
	err = d.W.Do(func() error {
		if err := m.compile(); err != nil {
			return err
		}
		if cfg.InnerOnly {
			if err := m.loadInner(weights); err != nil || !cfg.Backward {
				return err
			}
			return m.setupTrain()
		}
		if err := m.loadFull(weights); err != nil {
			return err
		}
		if cfg.Backward {
			if err := m.setupTrain(); err != nil || m.mamba() {
				return err // the mamba backbone's training forward is flat
			}
		}
		return m.setupChunks()
	})
	if err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// withEnv applies the XBENCH_GPU_* overrides, for experiments through the
// harness without a rebuild.
func withEnv(opt Options) Options {
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_INNER_THREADS")); err == nil && opt.InnerThreads == 0 {
		opt.InnerThreads = v
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_INNER_VARIANT")); err == nil && opt.InnerVariant == 0 {
		opt.InnerVariant = v
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_CLUSTER")); err == nil && opt.ClusterSize == 0 {
		opt.ClusterSize = v
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_EXCHANGE")); err == nil && opt.Exchange == 0 {
		opt.Exchange = v
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_BWD_VARIANT")); err == nil && opt.BwdVariant == 0 {
		opt.BwdVariant = v
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_UNROLL")); err == nil && opt.Unroll == 0 {
		opt.Unroll = v
	}
	if os.Getenv("XBENCH_GPU_ONEPASS") == "1" {
		opt.OnePassStats = true
	}
	if os.Getenv("XBENCH_GPU_GEMM") == "own" {
		opt.OwnGEMM = true
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_CHUNKS")); err == nil && opt.Chunks == 0 {
		opt.Chunks = v
	}
	if os.Getenv("XBENCH_GPU_PRIORITY") == "flat" {
		opt.FlatPriority = true
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_BWD_THREADS")); err == nil && opt.BwdThreads == 0 {
		opt.BwdThreads = v
	}
	if os.Getenv("XBENCH_GPU_NODE_PRIORITY") == "0" {
		opt.LaunchPriority = true
	}
	if os.Getenv("XBENCH_GPU_OVERLAP") == "0" {
		opt.SerialBackward = true
	}
	if os.Getenv("XBENCH_GPU_SIDE") == "asap" {
		opt.SideASAP = true
	}
	if v, err := strconv.Atoi(os.Getenv("XBENCH_GPU_HEAD_PARTS")); err == nil && opt.HeadParts == 0 {
		opt.HeadParts = v
	}
	if os.Getenv("XBENCH_GPU_GRAPH") == "0" {
		opt.Eager = true
	}
	return opt
}

// geometryFor is the compile-time shape of cfg's program.
// With variant 0, the linear model takes the cluster kernel where the device
// launches clusters and the shape allows it, else variant 2.
func geometryFor(cfg ttt.Config, opt Options, clusters bool) (geometry, ttt.Size, error) {
	size, err := ttt.LookupSize(cfg.ModelSize)
	if opt.Shape != nil {
		size, err = *opt.Shape, nil
	}
	if err != nil {
		return geometry{}, size, err
	}
	g := geometry{F: size.HeadDim, KB: cfg.MiniBatch, MLP: cfg.TTTType == "mlp",
		BF16: cfg.Dtype == "bfloat16", BaseLR: ttt.BaseLR(cfg.TTTType), Variant: opt.InnerVariant,
		OnePass: opt.OnePassStats, Unroll: opt.Unroll, CS: opt.ClusterSize, CLX: opt.Exchange}
	if g.CS <= 0 {
		g.CS = defaultClusterSize(cfg, g)
	}
	if opt.Exchange < 0 || opt.Exchange > 3 {
		return g, size, fmt.Errorf("gpu: cluster exchange %d (Options.Exchange, XBENCH_GPU_EXCHANGE): want 1 (two cluster barriers a step), 2 (one), 3 (st.async point to point) or 0 (default %d)", opt.Exchange, defaultExchange)
	}
	if g.Variant == 3 && g.CS > 1 && !clusters {
		return g, size, fmt.Errorf("gpu: the cluster kernel with %d CTAs per head needs thread-block clusters (CUDA sm_90+)", g.CS)
	}
	if cfg.Backward {
		g.Train = true
		if g, err = trainGeometry(g, clusters, opt.ClusterSize > 0, opt.BwdThreads, opt.BwdVariant); err != nil {
			return g, size, err
		}
	}
	if g.Variant == 0 && !g.MLP && clusters {
		c := g
		c.Variant = 3
		if nt, err := pickThreads(c, 0); err == nil {
			c.NT = nt
			return c, size, nil
		}
	}
	if g.NT, err = pickThreads(g, opt.InnerThreads); err != nil {
		return g, size, fmt.Errorf("gpu: %s f=%d mini_batch=%d: %w", cfg.TTTType, size.HeadDim, cfg.MiniBatch, err)
	}
	return g, size, nil
}

// defaultClusterSize is the cluster kernel's CTAs per head when Options
// leave it open: 4, except 8 for the inner-only phase, where the kernel has
// the GPU to itself; in the forward the chunked lanes run it beside the
// GEMMs, which the 4 SMs more a head slow more than they gain (both
// measured on the H100: docs/results/tuning.md#native-ttt-cluster-size).
// Shapes that 8 cannot split (check) keep 4.
func defaultClusterSize(cfg ttt.Config, g geometry) int {
	if cfg.InnerOnly && !cfg.Backward && !g.MLP {
		c := g
		c.Variant, c.CS, c.NT = 3, 8, g.KB*g.F/8
		if c.check() == nil {
			return 8
		}
	}
	return 4
}

// compile builds the program for this geometry and fetches every kernel.
func (m *Model) compile() error {
	r := m.dev.RT
	t0 := time.Now()
	mod, _, err := r.Module(m.geo.source(), m.geo.defines())
	if err != nil {
		return err
	}
	m.mod = mod
	for _, n := range m.geo.kernels() {
		f, err := r.Function(mod, n)
		if err != nil {
			return err
		}
		m.fn[n] = f
	}
	inner := m.fn[m.geo.innerName()]
	if r.SetDynSmem != nil {
		if err := r.SetDynSmem(inner, m.geo.smemBytes()); err != nil {
			return err
		}
	}
	m.innerRegs, m.innerLocal = r.FuncAttrs(inner)
	if m.geo.Train && r.SetDynSmem != nil {
		if err := r.SetDynSmem(m.fn[m.geo.bwdName()], m.geo.bwdSmemBytes()); err != nil {
			return err
		}
	}
	if m.sampler, err = r.NewSampler(fmt.Sprintf("ttt %s %s", m.cfg.ModelSize, m.cfg.TTTType), 0); err != nil {
		return err
	}
	m.compileMs = float64(time.Since(t0).Microseconds()) / 1e3
	return nil
}

// useBLAS says whether cuBLAS does the dense products.
func (m *Model) useBLAS() bool { return m.dev.RT.BLAS != nil && !m.opt.OwnGEMM }

// blasMathMode is pedantic for float32 (IEEE products, never TF32) unless
// DefaultMath asks otherwise; bfloat16 runs in default math with float32
// split-K sums (the spec: "matmuls accumulate in float32").
func (m *Model) blasMathMode() int32 {
	switch {
	case m.geo.BF16:
		return gpu.CublasFloat32Sums
	case m.opt.DefaultMath:
		return gpu.CublasDefaultMath
	}
	return gpu.CublasPedanticMath
}

// Describe is one line on how this model runs, for logs.
func (m *Model) Describe() string {
	dense := "portable GEMM kernels"
	if m.useBLAS() {
		dense = "cuBLAS"
	}
	forward := "flat"
	if m.chunks != nil {
		forward = fmt.Sprintf("%d chunks per sequence", len(m.chunks.lanes))
	}
	if m.train != nil {
		streams := "critical and side streams"
		if m.train.ov == nil {
			streams = "one stream"
		}
		forward = fmt.Sprintf("training step (%s forward, backward %s %d threads %d B shared, %s)", forward, m.geo.bwdName(),
			m.geo.NTB, m.geo.bwdSmemBytes(), streams)
	}
	if m.graphed() {
		forward += ", one graph replay per call"
	}
	inner := m.geo.innerName()
	if m.geo.cl() {
		inner += fmt.Sprintf(" (cluster %d, exchange %d)", m.geo.clusterSize(), m.geo.exchange())
	}
	return fmt.Sprintf("%s %s %s: inner %s %d threads, %d B shared, %d regs, %d B local; dense %s; forward %s; compile %.1f ms",
		m.cfg.ModelSize, m.cfg.TTTType, m.cfg.Dtype, inner, m.geo.NT, m.geo.smemBytes(),
		m.innerRegs, m.innerLocal, dense, forward, m.compileMs)
}

// CompileMs is the run-time compile and module load time of NewModel.
func (m *Model) CompileMs() float64 { return m.compileMs }

// PeakBytes counts every device allocation this model made (weights,
// activations, outputs) plus the shared cuBLAS workspace; nothing is
// allocated while it runs, so this is also the peak over timed calls.
func (m *Model) PeakBytes() int64 {
	b := m.bytes
	if m.useBLAS() {
		b += gpu.CublasWorkspace
	}
	return b
}

// alloc is a counted device allocation freed by Close.
func (m *Model) alloc(bytes int64) (gpu.Ptr, error) {
	if bytes <= 0 {
		bytes = 4
	}
	p, err := m.dev.RT.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	m.allocs = append(m.allocs, p)
	m.bytes += bytes
	return p, nil
}

// Close frees the model's device memory and module.
func (m *Model) Close() {
	if m == nil || m.dev == nil || m.dev.W == nil {
		return
	}
	m.dev.W.Do(func() error {
		r := m.dev.RT
		if m.cap != nil {
			m.destroyCapture(m.cap)
			m.cap = nil
		}
		m.closeChunks() // handles and streams before the workspaces they use
		m.closeOverlap()
		for _, p := range m.allocs {
			r.Free(p)
		}
		if m.sampler != nil {
			m.sampler.Close()
		}
		if m.mod != 0 {
			r.Drv.ModuleUnload(m.mod)
		}
		return nil
	})
	m.allocs, m.mod, m.dev = nil, 0, nil
}
