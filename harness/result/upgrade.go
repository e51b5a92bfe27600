package result

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Decode reads a stored result of any schema version still supported,
// validating it against its own version's schema and upgrading it to the
// current form. Version 1 results (TTT only, written before the workload
// axis) keep their numbers; their configuration becomes key/value pairs and
// tokens_per_s becomes the throughput in tokens/s.
func Decode(raw []byte) (Result, error) {
	var head struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Result{}, docError("not JSON: " + err.Error())
	}
	all, err := schemas()
	if err != nil {
		return Result{}, err
	}
	s, ok := all[head.SchemaVersion]
	if !ok {
		return Result{}, fmt.Errorf("schema_version %d is not one this xbench reads (it reads 1 and %d)", head.SchemaVersion, SchemaVersion)
	}
	if err := validateWith(s, raw); err != nil {
		return Result{}, err
	}
	if head.SchemaVersion == SchemaVersion {
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			return Result{}, fmt.Errorf("decode result: %w", err)
		}
		return r, nil
	}
	return upgradeV1(raw)
}

// v1Config is the configuration of schema version 1.
type v1Config struct {
	ModelSize string `json:"model_size"`
	TTTType   string `json:"ttt_type"`
	Backward  bool   `json:"backward"`
	InnerOnly bool   `json:"inner_only"`
	Batch     int    `json:"batch"`
	SeqLen    int    `json:"seq_len"`
	MiniBatch int    `json:"mini_batch"`
	Dtype     string `json:"dtype"`
	Backbone  string `json:"backbone"`
}

func upgradeV1(raw []byte) (Result, error) {
	var old struct {
		TokensPerS float64 `json:"tokens_per_s"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return Result{}, fmt.Errorf("decode v1 result: %w", err)
	}
	var r Result
	// Every other field kept its name and meaning; Config reads both forms.
	if err := json.Unmarshal(raw, &r); err != nil {
		return Result{}, fmt.Errorf("decode v1 result: %w", err)
	}
	r.SchemaVersion = SchemaVersion
	r.Throughput, r.ThroughputUnit = old.TokensPerS, ""
	if old.TokensPerS > 0 {
		r.ThroughputUnit = "tokens/s"
	}
	return r, nil
}

// UnmarshalJSON reads the current form and version 1's (TTT fields at the
// top level, two phase booleans), which verify records and results written
// before the workload axis still hold.
func (c *Config) UnmarshalJSON(raw []byte) error {
	type current Config // no methods: no recursion
	var both struct {
		current
		v1Config
	}
	if err := json.Unmarshal(raw, &both); err != nil {
		return err
	}
	*c = Config(both.current)
	old := both.v1Config
	if c.Params != nil || old.ModelSize == "" {
		return nil
	}
	c.Phase = "forward"
	switch {
	case old.InnerOnly:
		c.Phase = "inner_only"
	case old.Backward:
		c.Phase = "backward"
	}
	c.Params = map[string]string{
		"model_size": old.ModelSize, "ttt_type": old.TTTType, "batch": strconv.Itoa(old.Batch),
		"seq_len": strconv.Itoa(old.SeqLen), "mini_batch": strconv.Itoa(old.MiniBatch),
		"dtype": old.Dtype, "backbone": old.Backbone,
	}
	return nil
}
