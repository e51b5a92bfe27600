package verify

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
)

// FilePrefix marks a verify record among a run's result files (store.ReadAll
// passes over names that start with "_").
const FilePrefix = "_verify_"

// Record is what `xbench verify` stores beside a run's results; the report
// reads it to say which backends were shown correct.
type Record struct {
	RunID  string        `json:"run_id"`
	Config result.Config `json:"config"`
	Rows   []Row         `json:"rows"`
}

// WriteRecord stores r atomically as <dir>/<run_id>/_verify_<config>.json.
func WriteRecord(dir string, r Record) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode verify record: %w", err)
	}
	return store.WriteFileAtomic(filepath.Join(dir, r.RunID, FilePrefix+store.Key("all", r.Config)+".json"), raw)
}
