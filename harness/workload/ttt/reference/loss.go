package reference

import "math"

// CrossEntropy is the training step's loss: the mean next-token
// cross-entropy of logits [batch, seqLen, V] (the label of position t is
// tokens[t+1]; the last position of each sequence has none), over
// N = batch*(seqLen-1) positions. It is computed in float64 whatever T is.
func CrossEntropy[T Float](logits []T, tokens []int32, batch, seqLen, vocab int) float64 {
	return crossEntropy[T](nil, logits, tokens, batch, seqLen, vocab)
}

// crossEntropy returns CrossEntropy and, when dlogits is not nil, sets it
// to the loss's gradient, (softmax - onehot(label)) / N at positions with a
// label and 0 at the last. Rows run in parallel; their losses are summed
// in order.
func crossEntropy[T Float](dlogits, logits []T, tokens []int32, batch, seqLen, vocab int) float64 {
	n := batch * seqLen
	per := make([]float64, n)
	norm := 1 / float64(batch*(seqLen-1))
	parallelRows(n, func(row int) {
		x := logits[row*vocab : (row+1)*vocab]
		if row%seqLen == seqLen-1 {
			if dlogits != nil {
				clear(dlogits[row*vocab : (row+1)*vocab])
			}
			return
		}
		label := int(tokens[row+1])
		top := math.Inf(-1)
		for _, v := range x {
			top = math.Max(top, float64(v))
		}
		var sum float64
		for _, v := range x {
			sum += math.Exp(float64(v) - top)
		}
		lse := top + math.Log(sum)
		per[row] = lse - float64(x[label])
		if dlogits == nil {
			return
		}
		d := dlogits[row*vocab : (row+1)*vocab]
		for i, v := range x {
			d[i] = T(math.Exp(float64(v)-lse) * norm)
		}
		d[label] -= T(norm)
	})
	var loss float64
	for _, v := range per {
		loss += v
	}
	return loss * norm
}
