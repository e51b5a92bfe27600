// Package lint holds the repository's own lint checks that no pinned tool
// makes: they run as tests (go test ./lint), inside test.sh's go lane.
package lint
