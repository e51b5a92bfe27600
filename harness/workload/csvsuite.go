package workload

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// CSVSuite reads a `--shapes FILE` of parameter rows for w: each row holds
// the first min to len(columns) of columns, in order. A first row whose
// first field is not a number is a header and skipped; blank lines and
// lines starting with '#' are ignored. Every value is checked against its
// parameter here, so an error names the file and line rather than one
// configuration of many; the rules between values stay Check's. suites
// names what else --shapes accepts, for the error of an unreadable file.
func CSVSuite(w Workload, path string, columns []string, min int, suites string) ([]map[string]string, error) {
	want := strings.Join(columns[:min], ",")
	if min < len(columns) {
		want += "[," + strings.Join(columns[min:], ",") + "]"
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &ValueError{Flag: "--shapes", Value: path,
			Allowed: fmt.Sprintf("%s, or a readable CSV file of %s rows; %v", suites, want, err)}
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#'
	var out []map[string]string
	for first := true; ; first = false {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--shapes %s: %w", path, err) // a csv.ParseError names the line
		}
		line, _ := r.FieldPos(0)
		if first {
			if _, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64); err != nil {
				continue
			}
		}
		if len(rec) < min || len(rec) > len(columns) {
			return nil, fmt.Errorf("--shapes %s:%d: %d fields, want %s", path, line, len(rec), want)
		}
		row := map[string]string{}
		for i, v := range rec {
			p, ok := ParamOf(w, columns[i])
			if !ok {
				return nil, fmt.Errorf("--shapes %s: column %q is not a parameter of %s", path, columns[i], w.Name())
			}
			c, err := p.Canonical(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("--shapes %s:%d: %w", path, line, err)
			}
			row[columns[i]] = c
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--shapes %s: no shapes in the file (want rows %s)", path, want)
	}
	return out, nil
}
