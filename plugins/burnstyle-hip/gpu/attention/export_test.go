package attention

// WGMMAKeyRows is the wgmma kernel's k/v tile for s (wgmmaTiles): the GPU
// debug check needs it to know which keys the first tile holds.
func WGMMAKeyRows(s Spec) int { return s.wgmmaTiles().BN }
