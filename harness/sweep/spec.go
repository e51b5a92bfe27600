package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// LoadFile reads a sweep file: a JSON object whose keys are flag names of
// `xbench sweep` and whose values are what the flag would be given, or a
// list of them for the axes ({"seq-len": [512, 1024], "dtype": "float32"}).
// It returns each key's value as flag text, lists joined by commas, and
// refuses keys outside allowed (nil: any key), naming them and the allowed ones.
func LoadFile(path string, allowed []string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sweep file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("sweep file %s: not a JSON object: %w", path, err)
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	out := map[string]string{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if allowed != nil && !ok[k] {
			return nil, fmt.Errorf("sweep file %s: key %q is not allowed (allowed: %s)", path, k, strings.Join(allowed, ", "))
		}
		text, err := flagText(obj[k])
		if err != nil {
			return nil, fmt.Errorf("sweep file %s: key %q: %w", path, k, err)
		}
		out[k] = text
	}
	return out, nil
}

func flagText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if _, nested := e.([]any); nested {
				return "", fmt.Errorf("lists may not nest")
			}
			t, err := flagText(e)
			if err != nil {
				return "", err
			}
			if t == "" || strings.Contains(t, ",") {
				return "", fmt.Errorf("list item %q must be one non-empty value", t)
			}
			parts[i] = t
		}
		if len(parts) == 0 {
			return "", fmt.Errorf("empty list")
		}
		return strings.Join(parts, ","), nil
	default:
		return "", fmt.Errorf("value %v must be a string, number, true/false or a list of strings and numbers", v)
	}
}

// SaveFile writes a sweep file (what --slurm hands to its array tasks).
// List values stay comma-joined text, which LoadFile reads back unchanged.
func SaveFile(path string, values map[string]any) error {
	raw, err := json.MarshalIndent(values, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sweep file: %w", err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("write sweep file: %w", err)
	}
	return nil
}

// SplitList splits a comma list, trimming blanks; an empty item is an error
// naming the flag.
func SplitList(flag, text string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(text, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("--%s %q has an empty item (give a comma-separated list, e.g. a,b)", flag, text)
		}
		out = append(out, p)
	}
	return out, nil
}

// Product calls fn with every combination of one value from each list, the
// last list varying fastest.
func Product(lists [][]string, fn func(values []string) error) error {
	values := make([]string, len(lists))
	var rec func(i int) error
	rec = func(i int) error {
		if i == len(lists) {
			return fn(append([]string(nil), values...))
		}
		for _, v := range lists[i] {
			values[i] = v
			if err := rec(i + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return rec(0)
}

// ParseShard reads "i/N" (0 <= i < N).
func ParseShard(text string) (index, count int, err error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q is not i/N with 0 <= i < N (e.g. 0/4)", text)
	}
	return i, n, nil
}

// PinEnv is the environment that gives a worker's backend processes one GPU.
// CUDA_VISIBLE_DEVICES picks it on NVIDIA. On AMD, ROCR_VISIBLE_DEVICES
// picks it below every runtime, and HIP then sees that one device as index
// 0: HIP_VISIBLE_DEVICES filters the list ROCR left, so giving it the same
// id as ROCR would hide the device for every id but 0.
func PinEnv(gpu string) []string {
	return []string{"CUDA_VISIBLE_DEVICES=" + gpu, "ROCR_VISIBLE_DEVICES=" + gpu, "HIP_VISIBLE_DEVICES=0"}
}
