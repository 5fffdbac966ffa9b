package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/trace"
)

// packOptions are pack's flags.
type packOptions struct {
	maxSource, maxDebug, maxTotal string // --max-*-size, as given
	verbose                       bool   // -v
}

// limits reads the sizes the flags give, the default limits for those
// not given.
func (o *packOptions) limits(flags *pflag.FlagSet) (trace.PackLimits, error) {
	lim := trace.DefaultPackLimits
	for _, f := range []struct {
		name, val string
		dst       *int64
	}{{"max-source-size", o.maxSource, &lim.MaxSource}, {"max-debug-size", o.maxDebug, &lim.MaxDebug}, {"max-total-size", o.maxTotal, &lim.MaxTotal}} {
		if !flags.Changed(f.name) {
			continue
		}
		n, err := parseSize(f.val)
		if err != nil {
			return lim, fmt.Errorf("--%s: %w", f.name, err)
		}
		*f.dst = n
	}
	return lim, nil
}

func newPackCmd() *cobra.Command {
	var o packOptions
	cmd := &cobra.Command{
		Use:   "pack [--max-source-size N] [--max-debug-size N] [--max-total-size N] TRACE",
		Short: "Store the recording's source files and debug files in the trace",
		Long: `Adds to a finished trace the source files that the recorded programs' debug
information names and the separate debug files (by build-id under
/usr/lib/debug/.build-id, or .gnu_debuglink) of every executable and library
the recording stored, so that the recording debugs on a machine that lacks
them: the debugger (TUI, batch, MCP, DAP) takes a file from the trace when it
is not on disk, and says so.

Only files that exist here are stored, within the limits: a source file over
--max-source-size (default 4M), a debug file over --max-debug-size (default
256M), and files past --max-total-size for all of them (default 256M) are
listed as skipped. Packing again stores what changed and keeps what an
earlier pack stored that this machine lacks; the same files leave the trace
as it is. Frames of events a recording stored uncompressed, because the
program's data came faster than it compressed (cat or grep of a big file),
are compressed: a trace to share is smaller. The trace is rewritten beside
itself and renamed over: on failure it is untouched. An unfinished trace (a
recording still running, or killed) is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lim, err := o.limits(cmd.Flags())
			if err != nil {
				return err
			}
			return packTrace(os.Stdout, args[0], lim, o.verbose)
		},
	}
	cmd.Flags().StringVar(&o.maxSource, "max-source-size", "4M", "largest source file stored (bytes, or with K, M, G)")
	cmd.Flags().StringVar(&o.maxDebug, "max-debug-size", "256M", "largest separate debug file stored")
	cmd.Flags().StringVar(&o.maxTotal, "max-total-size", "256M", "most the stored files may take together")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "also list the files named that this machine does not have")
	return cmd
}

// packTrace packs the files the recording at path needs and says on w
// what it stored and what it skipped, and why.
func packTrace(w io.Writer, path string, lim trace.PackLimits, verbose bool) error {
	wants, err := packWants(path)
	if err != nil {
		return err
	}
	rep, err := trace.Pack(path, wants, lim)
	if err != nil {
		return err
	}
	reportPack(w, path, rep, verbose)
	return nil
}

// packWants lists the files worth packing: for every executable and file
// mapped that the recording stores or names, its separate debug file and
// the sources its debug information names.
func packWants(path string) ([]trace.PackWant, error) {
	images, rd, err := recordedImages(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var wants []trace.PackWant
	for _, img := range images {
		var r io.ReaderAt // nil: this machine's file
		if img.stored {
			// The stored copy is what ran; the file here may have changed.
			data, err := rd.Blob(img.blob)
			if err != nil {
				return nil, fmt.Errorf("pack %s: %w", path, err)
			}
			r = bytes.NewReader(data)
		} else if _, err := os.Stat(img.path); err != nil {
			continue
		}
		needs, err := dwarf.ImageNeeds(img.path, r)
		if err != nil {
			continue // not an ELF file: data, a locale archive, a font
		}
		if needs.DebugFile != "" {
			wants = append(wants, trace.PackWant{Kind: trace.PackedDebug, Path: needs.DebugFile, Image: img.path, BuildID: needs.BuildID})
		}
		for _, s := range needs.Sources {
			wants = append(wants, trace.PackWant{Kind: trace.PackedSource, Path: s})
		}
	}
	return wants, nil
}

// recordedImage is an executable or mapped file of the recording.
type recordedImage struct {
	path   string
	blob   uint32
	stored bool // blob holds its contents
}

// recordedImages lists, in the order the recording met them, the program,
// every file an exec or mmap stored (or, for a snapshot, mapped), and
// returns the open trace for their blobs.
func recordedImages(path string) ([]recordedImage, *trace.Reader, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, nil, err
	}
	var out []recordedImage
	seen := map[string]int{}
	add := func(im recordedImage) {
		if im.path == "" || strings.HasPrefix(im.path, "[") {
			return
		}
		if i, ok := seen[im.path]; ok {
			if im.stored && !out[i].stored {
				out[i] = im
			}
			return
		}
		seen[im.path] = len(out)
		out = append(out, im)
	}
	add(recordedImage{path: rd.Header().Program})
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			rd.Close()
			return nil, nil, err
		}
		if e.Map != nil && e.Map.Path != "" {
			add(recordedImage{path: strings.TrimSuffix(e.Map.Path, " (deleted)"), blob: e.Map.Blob, stored: true})
		}
		if e.Kind == trace.KindSnapshot {
			s, err := trace.DecodeSnapshot(e)
			if err != nil {
				continue // replay reports it
			}
			add(recordedImage{path: s.Exe})
			for _, r := range s.Regions {
				add(recordedImage{path: r.Path})
			}
		}
	}
	return out, rd, nil
}

// reportPack says what pack did: a summary line, then a line per file
// stored or skipped (never dropped silently), and how many files the
// debug information names that this machine does not have.
func reportPack(w io.Writer, path string, rep *trace.PackReport, verbose bool) {
	count := packedSummary
	switch {
	case !rep.Rewritten:
		fmt.Fprintf(w, "rewind: %s already holds these files, unchanged: %s\n", displayPath(path), count(rep.Kept))
	default:
		fmt.Fprintf(w, "rewind: packed into %s: %s", displayPath(path), count(rep.Added))
		if len(rep.Kept) > 0 {
			fmt.Fprintf(w, "; kept %s from before", count(rep.Kept))
		}
		if n := rep.Compressed; n > 0 {
			fmt.Fprintf(w, "; compressed %d %s of events the recording stored raw", n, plural(n, "frame"))
		}
		fmt.Fprintln(w)
	}
	for _, f := range rep.Added {
		fmt.Fprintf(w, "  added    %-6s %s (%s)%s\n", f.Kind, f.Path, trace.FormatSize(f.Size), forImage(f))
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "  skipped  %-6s %s (%s): %s\n", s.Kind, s.Path, trace.FormatSize(s.Size), s.Reason)
	}
	if n := len(rep.Missing); n > 0 {
		fmt.Fprintf(w, "  %d %s named by the debug information %s not on this machine (nothing to add)", n, plural(n, "file"), plural(n, "is", "are"))
		if !verbose {
			fmt.Fprint(w, "; -v lists them")
		}
		fmt.Fprintln(w)
		if verbose {
			sort.Slice(rep.Missing, func(i, j int) bool { return rep.Missing[i].Path < rep.Missing[j].Path })
			for _, m := range rep.Missing {
				fmt.Fprintf(w, "  missing  %-6s %s\n", m.Kind, m.Path)
			}
		}
	}
}

// forImage names the image of a debug file.
func forImage(f trace.PackedFile) string {
	if f.Image == "" {
		return ""
	}
	return " for " + f.Image
}

// parseSize reads a size: bytes, or a number with K, M or G (powers of
// 1024, optionally followed by iB or B).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, suf := range []string{"iB", "B"} {
		if len(t) > len(suf) && strings.HasSuffix(t, suf) && strings.ContainsAny(t[len(t)-len(suf)-1:len(t)-len(suf)], "KMGkmg") {
			t = t[:len(t)-len(suf)]
			break
		}
	}
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q: a number of bytes, or with K, M or G", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// packedSummary is rewind info's line on the packed files: how many of
// each kind and their size.
func packedSummary(files []trace.PackedFile) string {
	var src, dbg int
	var ssize, dsize int64
	for _, f := range files {
		if f.Kind == trace.PackedSource {
			src, ssize = src+1, ssize+f.Size
		} else {
			dbg, dsize = dbg+1, dsize+f.Size
		}
	}
	return fmt.Sprintf("%d source %s (%s), %d debug %s (%s)", src, plural(src, "file"), trace.FormatSize(ssize),
		dbg, plural(dbg, "file"), trace.FormatSize(dsize))
}
