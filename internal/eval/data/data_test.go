package data

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

// TestEmbedded checks every file of the data folders is inside the
// binary, byte for byte, with its licence: a file added to a folder but
// not to a go:embed pattern would otherwise be missing only outside the
// repository.
func TestEmbedded(t *testing.T) {
	for _, c := range []struct {
		dir  string
		fsys fs.FS
	}{{"shockwave", Shockwave}, {"alibaba", Alibaba}} {
		disk := os.DirFS(c.dir)
		var files []string
		err := fs.WalkDir(disk, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := fstest.TestFS(c.fsys, files...); err != nil {
			t.Errorf("%s: %v", c.dir, err)
		}
		for _, p := range files {
			want, _ := fs.ReadFile(disk, p)
			got, err := fs.ReadFile(c.fsys, p)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s/%s: embedded copy differs (%v)", c.dir, p, err)
			}
		}
		if _, err := fs.Stat(c.fsys, "LICENSE"); err != nil {
			t.Errorf("%s: no LICENSE: %v", c.dir, err)
		}
	}
}
