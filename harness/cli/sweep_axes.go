package cli

// The sweep's axes: flags and a sweep file expanded into cells.

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/sweep"
)

func hasHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}

// applyFile sets every flag the sweep file names and the command line did not.
func (f *sweepFlags) applyFile(fs *pflag.FlagSet) error {
	if f.config == "" {
		return nil
	}
	var allowed []string
	fs.VisitAll(func(fl *pflag.Flag) {
		if !notInFile[fl.Name] {
			allowed = append(allowed, fl.Name)
		}
	})
	values, err := sweep.LoadFile(f.config, allowed)
	if err != nil {
		return usagef("--config %s: %v", f.config, err)
	}
	for k, v := range values {
		if fs.Changed(k) {
			continue
		}
		if err := fs.Set(k, v); err != nil {
			return usagef("--config %s: key %q: value %q: %v", f.config, k, v, err)
		}
	}
	return nil
}

// cells expands the axes into the ordered plan, checking every combination
// the way `xbench run` checks its flags.
func (f *sweepFlags) cells(names []string) ([]sweep.Cell, error) {
	phases := f.phase
	if f.backward || f.innerOnly {
		if f.backward && f.innerOnly {
			return nil, usagef("--backward and --inner-only were both given (allowed: one of them, or --phase with a list)")
		}
		phases = map[bool]string{true: "backward", false: "inner_only"}[f.backward]
	}
	texts := []struct{ flag, text string }{{"device", f.device}, {"model-size", f.size}, {"ttt-type", f.tttType},
		{"phase", phases}, {"dtype", f.dtype}, {"backbone", f.backbone}, {"batch", f.batch}, {"seq-len", f.seqLen}, {"mini-batch", f.miniBatch}}
	lists := make([][]string, len(texts))
	for i, t := range texts {
		l, err := sweep.SplitList(t.flag, t.text)
		if err != nil {
			return nil, usagef("%v", err)
		}
		lists[i] = l
	}
	seen := map[string]bool{}
	var out []sweep.Cell
	err := sweep.Product(lists, func(v []string) error {
		w := workloadFlags{device: v[0], modelSize: v[1], tttType: v[2], dtype: v[4], backbone: v[5], warmup: f.warmup, repeats: f.repeats}
		switch v[3] {
		case "forward":
		case "backward":
			w.backward = true
		case "inner_only":
			w.innerOnly = true
		default:
			return usagef("--phase %q is not allowed (allowed: forward, backward, inner_only)", v[3])
		}
		for i, dst := range []*int{&w.batch, &w.seqLen, &w.miniBatch} {
			n, err := strconv.Atoi(v[6+i])
			if err != nil {
				return usagef("--%s %q is not an integer", texts[6+i].flag, v[6+i])
			}
			*dst = n
		}
		cfg, err := w.config()
		if err != nil {
			return err
		}
		for _, name := range names {
			c := sweep.Cell{Backend: name, Device: w.device, Config: cfg}
			if !seen[c.Key()] { // "1b" and "1.3b" are one cell
				seen[c.Key()] = true
				out = append(out, c)
			}
		}
		return nil
	})
	sweep.Order(out)
	return out, err
}
