package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/checkout"
	"github.com/gradsolve/gradsolve/sym/parse"
	"github.com/gradsolve/gradsolve/sym/tape"
)

// TestStudiesSmall runs every study at B = 2 with each optimiser (Adam
// for 60 updates) and checks that the rows are filled in and that every
// fit of L-BFGS and LM lands within 3 Fisher standard errors.
func TestStudiesSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the three studies")
	}
	root, err := checkout.Root()
	if err != nil {
		t.Fatal(err)
	}
	var rows []row
	for _, st := range studies() {
		m, err := parse.ParseFile(filepath.Join(root, "examples", st.file))
		if err != nil {
			t.Fatal(err)
		}
		set, err := tape.Build(m)
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.setup(set.Problem(), 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{"adam", "lbfgs", "lm"} {
			r, err := c.run(o, 60, 20)
			if err != nil {
				t.Fatalf("%s %s: %v", st.name, o, err)
			}
			if r.Evaluations == 0 || r.Wall <= 0 {
				t.Errorf("%s %s: empty row %+v", st.name, o, r)
			}
			if o == "adam" && (r.DriftChecks == 0 || r.Ratio <= 0) {
				t.Errorf("%s adam: %d drift checks, update/solve %g", st.name, r.DriftChecks, r.Ratio)
			}
			if o != "adam" && r.Pass != 2 {
				t.Errorf("%s %s: %d/2 fits within 3σ (worst %.2fσ)", st.name, o, r.Pass, r.Worst)
			}
			rows = append(rows, r)
		}
	}
	md := table(rows)
	if got, want := strings.Count(md, "\n"), 2+len(rows); got != want {
		t.Errorf("table has %d lines, want %d", got, want)
	}
}
