package cli

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

// packCmd packs a finished campaign folder into its archive
// (store.CampaignArchive) and removes what it packed but was not asked to
// keep, so a campaign of
// thousands of small JSON files becomes one file that report, history,
// export and compare read as the folder (the folder's old paths too).
func packCmd(_ context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("pack", pflag.ContinueOnError)
	var keep []string
	var dryRun bool
	fs.StringSliceVar(&keep, "keep", nil, "also leave files matching this pattern as plain files beside the archive (packed too, so the archive is the whole campaign) (a path relative to the folder or a base name, path.Match syntax: e.g. '*.log', 'sweep/_calibration.json'); repeatable. README.md, .md files and archives are always kept")
	fs.BoolVar(&dryRun, "dry-run", false, "list what would be packed and kept, change nothing")
	if help, err := parseFlagsArgs(a, fs, args, "FOLDER", 1); help || err != nil {
		return err
	}
	dir := filepath.Clean(fs.Arg(0))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("folder %q is not a folder (allowed: a finished campaign's results folder)", workload.Cut(dir, 120))
	}
	archive := store.CampaignArchive(dir)
	if _, err := os.Lstat(archive); err == nil {
		return usagef("folder %q is already packed: %s exists (allowed: a folder without its archive)", workload.Cut(dir, 120), archive)
	}
	for _, k := range keep {
		if _, err := path.Match(k, ""); err != nil {
			return usagef("--keep %q is not a valid pattern (allowed: path.Match syntax, e.g. '*.log')", workload.Cut(k, 80))
		}
	}
	// Everything but an archive is packed, so the archive alone is the
	// campaign; what keepPlain names also stays a plain file, for links.
	var kept []string
	pack := func(rel string) bool {
		if keepPlain(rel, keep) {
			kept = append(kept, rel)
		}
		return !store.IsArchiveName(path.Base(rel))
	}
	if dryRun {
		names, err := listPackable(dir, pack)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.Stdout, "would pack %d files into %s and keep %d of them plain: %s\n", len(names), archive, len(kept), strings.Join(kept, ", "))
		return nil
	}
	names, err := store.Pack(dir, archive, pack)
	if err != nil {
		return err
	}
	for _, n := range names {
		if slices.Contains(kept, n) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(n))); err != nil {
			return fmt.Errorf("pack %s: remove a packed file: %w", dir, err)
		}
	}
	removeEmptyFolders(dir)
	st, err := os.Stat(archive)
	if err != nil {
		return fmt.Errorf("pack %s: %w", dir, err)
	}
	fmt.Fprintf(a.Stdout, "packed %d files into %s (%d bytes); kept %d of them plain beside it: %s\n", len(names), archive, st.Size(), len(kept), strings.Join(kept, ", "))
	return nil
}

// keepPlain says whether rel stays a plain file: the README and other
// notes (docs link to them), archives (packed campaigns from before; an
// archive in an archive is not read), and what a --keep pattern matches
// (logs a README cites by name).
func keepPlain(rel string, patterns []string) bool {
	base := path.Base(rel)
	if strings.HasSuffix(base, ".md") || store.IsArchiveName(base) {
		return true
	}
	for _, p := range patterns {
		if m, _ := path.Match(p, rel); m {
			return true
		}
		if m, _ := path.Match(p, base); m {
			return true
		}
	}
	return false
}

// listPackable is what store.Pack would pack, for --dry-run.
func listPackable(dir string, pack func(string) bool) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err == nil && pack(filepath.ToSlash(rel)) {
			names = append(names, rel)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	return names, nil
}

// removeEmptyFolders removes the folders below dir that packing emptied,
// deepest first; a folder still holding a kept file stays.
func removeEmptyFolders(dir string) {
	var folders []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			folders = append(folders, p)
		}
		return nil
	})
	slices.Reverse(folders)
	for _, f := range folders {
		_ = os.Remove(f) // fails, as it should, on a folder that is not empty
	}
}
