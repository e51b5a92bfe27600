package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// trainJob is a prepared training step (phase backward): each Step is
// the forward and the gradient of the loss with respect to every
// parameter, timed as one call.
type trainJob[T Float] struct {
	m             *Model[T]
	params        []ttt.Param // the gradients' names and shapes, in the spec's order
	tokens        []int32
	batch, seqLen int
	logits        []T
	grads         map[string][]T
}

func newTrainJob[T Float](m *Model[T], cfg ttt.Config, s ttt.Size, tokens []int32) *trainJob[T] {
	return &trainJob[T]{m: m, params: ttt.Params(s, cfg.TTTType, cfg.MiniBatch, m.Backbone),
		tokens: tokens, batch: cfg.Batch, seqLen: cfg.SeqLen}
}

func (j *trainJob[T]) Step() (err error) {
	j.logits, j.grads, err = j.m.TrainStep(j.tokens, j.batch, j.seqLen)
	return err
}

func (j *trainJob[T]) Output() (string, tensorfile.Tensor, error) {
	if j.logits == nil {
		return "", tensorfile.Tensor{}, fmt.Errorf("output: no training step has run")
	}
	return "logits", pack(j.logits, []int{j.batch, j.seqLen, j.m.Size.Vocab}), nil
}

// Outputs are the logits and grad.<name> for every parameter, each in the
// parameter's shape (docs/ttt-backward.md, "What verify compares").
func (j *trainJob[T]) Outputs() (map[string]tensorfile.Tensor, error) {
	name, logits, err := j.Output()
	if err != nil {
		return nil, err
	}
	out := map[string]tensorfile.Tensor{name: logits}
	for _, p := range j.params {
		g, ok := j.grads[p.Name]
		if !ok || len(g) != p.Elements() {
			return nil, fmt.Errorf("outputs: gradient of %q has %d elements, want %d", p.Name, len(g), p.Elements())
		}
		out[ttt.GradPrefix+p.Name] = pack(g, p.Shape)
	}
	return out, nil
}

// MemoryBytes counts parameters, the kept activations, the backward's
// buffers, the gradients and the token ids.
func (j *trainJob[T]) MemoryBytes() int64 { return j.m.Bytes() + int64(4*len(j.tokens)) }

func (j *trainJob[T]) Close() error { j.m, j.logits, j.grads = nil, nil, nil; return nil }
