// Package data holds the data the evaluation replays, inside the binary:
// the Shockwave authors' traces, throughput tables and configurations
// (MIT, shockwave/LICENSE) and the Alibaba PAI mini-batch times (CC-BY-4.0,
// alibaba/LICENSE), 4.8 MB in all. The command line, its demo and the
// replays' tests read them from here, so they run from any folder;
// `--data` and `--noise-dir` override them with a folder of the same
// layout.
package data

import (
	"embed"
	"io/fs"
)

//go:embed shockwave/LICENSE shockwave/README.md shockwave/*.json shockwave/traces shockwave/configurations
var shockwave embed.FS

//go:embed alibaba/LICENSE alibaba/README.md alibaba/*.csv
var alibaba embed.FS

// Shockwave is the Shockwave authors' data folder (their repository's
// scheduler/ subset, see shockwave/README.md): traces/, configurations/,
// tacc_throughputs.json and wisr_throughputs.json, with their LICENSE.
// replay.AuthorsSetup names its files.
var Shockwave fs.FS = sub(shockwave, "shockwave")

// Alibaba is the Alibaba PAI release's mini-batch times (job_N_norm.csv,
// coefficient_variation.csv; see alibaba/README.md), with their LICENSE:
// replay.Cassini's NoiseData.
var Alibaba fs.FS = sub(alibaba, "alibaba")

func sub(f embed.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // a constant, valid directory name
	}
	return s
}
