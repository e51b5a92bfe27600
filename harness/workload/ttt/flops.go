package ttt

// ForwardFLOPs counts the floating-point operations of one forward call of
// cfg (or, when cfg.InnerOnly, of one layer's inner loop), counting 2*m*n*k
// per [m,k]x[k,n] matmul and ignoring element-wise work (norms, RoPE,
// activations, softmax-free gates), which is small next to the matmuls.
//
// With T = B*L tokens, C hidden, I MLP width, V vocab, nh heads, f head dim,
// K mini-batch:
//
//	dense per layer   = 2*T*C*C * 4            (wq, wk, wv, wo; mamba: wq, wv, wo, wg)
//	                  + 2*T*C*nh               (learning-rate gate)
//	                  + 2*T*C*I * 3            (SwiGLU gate, up, down)
//	head              = 2*T*C*V                (tied embedding)
//	inner, linear     = T*nh * (6*f*f + 6*K*f) per layer:
//	                    per mini-batch Kx@W1, Q@W1, Kx^T@G are 2*K*f*f each;
//	                    Q@Kx^T, (eta*A)@G, tril(eta)@G are 2*K*K*f each
//	inner, mlp        = T*nh * (56*f*f + 30*K*f) per layer:
//	                    seven [K]x[f]x[4f]-sized products (Z1, Z2, G2@W2^T,
//	                    Q@W1, X2bar@W2 and the two weight updates) at 8*K*f*f;
//	                    Q@Kx^T (2*K*K*f), (eta*A)@G1, tril(eta)@G1, X2bar@X2^T
//	                    (8*K*K*f each), (eta*A)@G2, tril(eta)@G2 (2*K*K*f each)
func ForwardFLOPs(cfg Config, s Size) float64 {
	T := float64(cfg.Batch) * float64(cfg.SeqLen)
	C, I, V := float64(s.Hidden), float64(s.MLP), float64(s.Vocab)
	nh, f, K := float64(s.Heads), float64(s.HeadDim), float64(cfg.MiniBatch)

	var inner float64
	if cfg.TTTType == "mlp" {
		inner = T * nh * (56*f*f + 30*K*f)
	} else {
		inner = T * nh * (6*f*f + 6*K*f)
	}
	if cfg.InnerOnly {
		return inner
	}
	dense := 2*T*C*C*4 + 2*T*C*nh + 2*T*C*I*3
	if cfg.Backbone == "mamba" {
		// Three depthwise kernel-4 convolutions per layer: 2*4 flops per element.
		dense += 3 * 2 * ConvWidth * T * C
	}
	return float64(s.Layers)*(dense+inner) + 2*T*C*V
}
