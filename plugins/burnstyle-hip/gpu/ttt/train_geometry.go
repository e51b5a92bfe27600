package ttt

import "fmt"

// The training step's additions to the compiled program: the dense backward
// kernels (backward.cu), the mamba backbone's (mamba_bwd.cu; every training
// program has them, as every program has mamba.cu's forward kernels) and
// the inner backward kernel of the model's type, whose block size NTB is
// chosen apart from the forward kernel's NT.

// trainFiles are the kernel sources a training-step program adds.
func (g geometry) trainFiles() []string {
	if !g.Train {
		return nil
	}
	inner := "inner_linear_bwd.cu"
	switch {
	case g.MLP:
		inner = "inner_mlp_bwd.cu"
	case g.BwdCL:
		inner = "inner_linear_bwd_cl.cu"
	}
	return []string{"backward.cu", "mamba_bwd.cu", "inner_bwd_common.cuh", inner}
}

func (g geometry) trainDefines() []string {
	if !g.Train {
		return nil
	}
	return []string{fmt.Sprintf("-DXB_NTB=%d", g.NTB)}
}

// bwdName is the inner backward kernel.
func (g geometry) bwdName() string {
	switch {
	case g.MLP:
		return "xb_inner_mlp_bwd"
	case g.BwdCL:
		return "xb_inner_linear_bwd_cl"
	}
	return "xb_inner_linear_bwd"
}

// kernels are the functions the program's host code fetches.
func (g geometry) kernels() []string {
	return append([]string{"xb_embed", "xb_rmsnorm", "xb_layernorm", "xb_prep", "xb_swiglu",
		"xb_gemm_nn", "xb_gemm_nt", "xb_gemm_nn_acc", g.innerName(),
		"xb_conv_res", "xb_prep_mamba", "xb_layernorm_gate"}, g.trainKernels()...)
}

// trainKernels are the functions a training-step program adds.
func (g geometry) trainKernels() []string {
	if !g.Train {
		return nil
	}
	return append([]string{g.bwdName(), "xb_xent", "xb_rmsnorm_bwd", "xb_layernorm_bwd", "xb_swiglu_bwd",
		"xb_prep_bwd", "xb_embed_bwd", "xb_copy", "xb_zero"}, mambaBwdKernels...)
}

// bwdSmemBytes mirrors LINB_SMEM_FLOATS / MLPB_SMEM_FLOATS of the kernel
// sources (the emulator fails a launch that gives less than the kernel uses).
func (g geometry) bwdSmemBytes() int {
	F, KB := g.F, g.KB
	SF := F + 4
	if g.BwdCL { // LINBC_SMEM_FLOATS
		cs := g.clusterSize()
		fc := F / cs
		return 4 * (2*fc*SF + 2*r4(fc) + 2*KB*SF + 3*KB*(fc+4) + 4*KB*KB + 3*r4(KB) + 8*KB +
			cs*(KB*KB+4*KB) + cs*KB*2 + 4*cs*KB*fc)
	}
	if !g.MLP {
		return 4 * (2*F*SF + 2*r4(F) + 14*KB*SF + 4*KB*KB + 5*r4(KB))
	}
	H := 4 * F
	SH := H + 4
	return 4 * (9*KB*SH + 14*KB*SF + 7*KB*KB + 6*r4(KB) + r4(H) + r4(F))
}

// checkBwd states the inner backward kernels' shape assumptions: a [K][F]
// tile splits into NTB/F row groups (for mlp also [K][4F] into NTB/4F), row
// phases give a row to LG lanes (a power of two), and 2K threads compute
// the gate and token-rate gradients side by side.
func (g geometry) checkBwd() error {
	// The forward's row-group rules (NT a multiple of H = F or 4F is one of
	// F), with twice the mini-batch of threads.
	return checkRowGroups(g.F, g.KB, g.NTB, g.hidden(), g.MLP, 2*g.KB, "twice the mini-batch")
}

// pickBwdThreads is want if it fits, else the first block size of a
// preference list that does.
func pickBwdThreads(g geometry, want int) (int, error) {
	cands := []int{256, 512, 128, 1024, 64}
	if g.MLP { // 256 first: at 512 threads (128 registers each) the mlp kernel spills
		cands = []int{256, 512, 1024, 128}
	}
	if want > 0 {
		cands = []int{want}
	}
	nt, err := firstFitting(cands, func(nt int) error { g.NTB = nt; return g.checkBwd() })
	if err != nil {
		return 0, fmt.Errorf("inner backward: %w", err)
	}
	return nt, nil
}

// trainGeometry completes g for the training step. The linear model's state
// trace comes from the cluster kernel (variant 3), so that layout is taken
// whatever the default; a cluster size that splits the head dim is searched
// where none was asked for (1 runs it without clusters).
func trainGeometry(g geometry, clusters bool, askedCS bool, bwdThreads, bwdVariant int) (geometry, error) {
	if !g.MLP {
		if g.Variant != 0 && g.Variant != 3 {
			return g, fmt.Errorf("gpu: the training step records the inner state from the cluster kernel (variant 3), not variant %d", g.Variant)
		}
		g.Variant = 3
		sizes := []int{g.CS}
		if !askedCS {
			sizes = []int{4, 2, 8, 3, 6, 1}
		}
		var first error
		for _, cs := range sizes {
			if cs > 1 && !clusters {
				continue
			}
			c := g
			c.CS = cs
			nt, err := pickThreads(c, 0)
			if err == nil {
				g, g.NT = c, nt
				first = nil
				break
			}
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return g, fmt.Errorf("gpu: training step, linear f=%d mini_batch=%d: %w", g.F, g.KB, first)
		}
	}
	if !g.MLP {
		cl, err := pickBwdCluster(g, bwdThreads, bwdVariant)
		if err != nil {
			return g, fmt.Errorf("gpu: training step, linear f=%d mini_batch=%d: %w", g.F, g.KB, err)
		}
		if cl {
			g.BwdCL, g.NTB = true, g.KB*g.F/g.clusterSize()
			return g, nil
		}
	}
	nt, err := pickBwdThreads(g, bwdThreads)
	if err != nil {
		return g, fmt.Errorf("gpu: training step, %s f=%d mini_batch=%d: %w", map[bool]string{false: "linear", true: "mlp"}[g.MLP], g.F, g.KB, err)
	}
	g.NTB = nt
	return g, nil
}

// checkBwdCluster states the cluster backward's shape assumptions beyond
// the forward cluster kernel's (which it shares: FC columns a CTA, one
// thread per owned element): float4 reads along FC, the partials' rows
// (KB*F/NTB = CS a thread), and the gate and token-rate gradients summed
// over KB lanes of whole warps.
func (g geometry) checkBwdCluster() error {
	cs := g.clusterSize()
	fc := g.F / cs
	switch {
	case g.KB < 8 || g.KB > 32 || g.KB&(g.KB-1) != 0:
		return fmt.Errorf("cluster backward: mini-batch %d, need a power of 2 from 8 to 32", g.KB)
	case fc%4 != 0:
		return fmt.Errorf("cluster backward: %d columns a CTA, need a multiple of 4", fc)
	case g.KB%cs != 0:
		return fmt.Errorf("cluster backward: mini-batch %d is not a multiple of the cluster size %d", g.KB, cs)
	case g.KB*fc > 1024:
		return fmt.Errorf("cluster backward: %d threads, at most 1024", g.KB*fc)
	}
	return nil
}

// pickBwdCluster says whether the linear backward runs on the forward's
// cluster: variant 2 asks for it (an error if the shape does not allow
// it), 1 for one block per head; 0 takes the cluster where it fits and no
// block size was asked for.
func pickBwdCluster(g geometry, bwdThreads, variant int) (bool, error) {
	switch variant {
	case 0:
		return bwdThreads == 0 && g.checkBwdCluster() == nil, nil
	case 1:
		return false, nil
	case 2:
		if bwdThreads != 0 && bwdThreads != g.KB*g.F/g.clusterSize() {
			return false, fmt.Errorf("inner backward variant 2 runs %d threads (mini-batch x columns a CTA), not %d", g.KB*g.F/g.clusterSize(), bwdThreads)
		}
		return true, g.checkBwdCluster()
	}
	return false, fmt.Errorf("inner backward variant %d: want 0 (pick), 1 (one block per head) or 2 (cluster)", variant)
}
