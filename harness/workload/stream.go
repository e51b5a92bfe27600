package workload

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream is the random stream of one named fixture tensor: a PCG seeded by
// the verification seed and a hash of the name, so no tensor's values depend
// on another's name or size.
func Stream(seed int64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}
