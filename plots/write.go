package plots

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkPath rejects an empty destination or one that does not end in .png.
func checkPath(path string) error {
	if path == "" {
		return errors.New("plots: empty output path")
	}
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("plots: %s: output path must end in .png", path)
	}
	return nil
}

// pathErr prefixes err with the package and destination path.
func pathErr(path string, err error) error {
	return fmt.Errorf("plots: %s: %w", path, err)
}

// recoverTo turns a panic inside the plotting library into an error naming
// path. It must be deferred directly.
func recoverTo(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("plots: %s: drawing failed: %v", path, r)
	}
}

// writeAtomic writes data to path through a temporary file in the same
// directory that is renamed over path once complete; on failure the
// temporary file is removed and path is left as it was.
func writeAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return pathErr(path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = pathErr(path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
