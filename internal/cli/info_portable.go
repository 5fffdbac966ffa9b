package cli

import (
	"fmt"

	"github.com/rewind-debugger/rewind/engine/trace"
)

// portability gathers, from a recording's exec events, whether it replays
// on a machine whose files differ (issue 24): each exec's image must be in
// it, whole.
type portability struct {
	execs   int
	noImage int
	missing string
	files   map[string]bool // the executables and loaders stored
}

// observe looks at one exec event.
func (p *portability) observe(e *trace.Event) {
	p.execs++
	im, err := trace.DecodeImage(e)
	switch {
	case err != nil:
		p.missing = err.Error()
	case im == nil:
		p.noImage++
	case im.Missing != "":
		p.missing = im.Missing
	default:
		for _, r := range im.Regions {
			if r.Stored != nil {
				if p.files == nil {
					p.files = map[string]bool{}
				}
				p.files[r.Stored.Path] = true
			}
		}
	}
}

// describe is the info line: yes or no, and why.
func (p *portability) describe(h *trace.Header) string {
	var files string
	switch {
	case p.execs == 0:
		files = "no: it starts from a snapshot of a running process, whose files replay needs"
	case p.noImage > 0:
		files = fmt.Sprintf("no: recorded by a rewind that kept no exec images (format %d), replay needs the recorded files", h.FormatVersion)
	case p.missing != "":
		files = "no: an exec's file could not be stored (" + p.missing + ")"
	default:
		files = fmt.Sprintf("yes: the %d files %d execs ran and every file they mapped are in the recording", len(p.files), p.execs)
	}
	switch {
	case (h.CPUIDFaulting || h.CpuidPatched) && h.CPUSpec != "":
		files += "; cpuid's answers recorded, with the features --cpu-features hid left out: another CPU with the instruction sets the program was shown replays them"
	case h.CPUIDFaulting:
		files += "; cpuid's answers recorded (CPUID faulting): another CPU with the same instruction sets replays them (record --cpu-features widens that)"
	case h.CpuidPatched:
		files += "; cpuid's answers recorded (its sites trapped): another CPU with the same instruction sets replays them (record --cpu-features widens that)"
	default:
		files += "; cpuid's answers not recorded: replay needs a CPU of the same model"
	}
	return files
}
