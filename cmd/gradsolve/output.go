package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/npy"
	"github.com/gradsolve/gradsolve/ode"
)

// statusCode is the number status.npy holds for each status: 0 means
// success, so `status != 0` selects the failures.
var statusCode = map[gradsolve.Status]int32{
	gradsolve.Success:         0,
	gradsolve.MaxStepsReached: 1,
	gradsolve.NonFinite:       2,
	gradsolve.StepUnderflow:   3,
	gradsolve.Cancelled:       4,
	gradsolve.NotRun:          5,
}

// checkOutDir creates dir if needed and checks that files can be
// created in it, before any work is done.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	f, err := os.CreateTemp(dir, ".gradsolve-probe-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot write there: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// stats is the content of stats.json.
type stats struct {
	Problem       string         `json:"problem"`
	Engine        string         `json:"engine"`
	RHS           string         `json:"rhs"`
	Method        string         `json:"method"`
	RTol          float64        `json:"rtol"`
	ATol          float64        `json:"atol"`
	N             int            `json:"n"`
	Dim           int            `json:"dim"`
	K             int            `json:"k"`
	Workers       int            `json:"workers"`
	SolveSeconds  float64        `json:"solve_seconds"`
	WallSeconds   float64        `json:"wall_seconds"`
	Accepted      int            `json:"accepted_steps"`
	Rejected      int            `json:"rejected_steps"`
	FEvals        int            `json:"f_evaluations"`
	Failed        int            `json:"failed"`
	Statuses      map[string]int `json:"statuses"`
	StatusCodes   map[string]int `json:"status_codes"`
	StateNames    []string       `json:"state_names"`
	ParamNames    []string       `json:"param_names"`
	FirstFailures []string       `json:"first_failures,omitempty"`
	// grad only
	Loss            *float64 `json:"loss,omitempty"`
	RecordSeconds   float64  `json:"record_seconds,omitempty"`
	GradientSeconds float64  `json:"gradient_seconds,omitempty"`
	Mode            string   `json:"mode,omitempty"`
	Reason          string   `json:"mode_reason,omitempty"`
	*gradStats               // grad only: columns and engine (grad.go)
}

// writeOutputs writes the result files into dir, each atomically (a
// temporary file renamed into place), so a run that fails part-way
// leaves no half-written file under a final name.
func writeOutputs(dir string, pr *ode.Problem, in *inputs, res *gradsolve.Result, rhs string, wallStart time.Time, extra func(st *stats)) error {
	n, dim, k := res.N, res.Dim, res.K
	if err := npy.WriteFloat64File(filepath.Join(dir, "y_final.npy"), []int{n, dim}, res.Y); err != nil {
		return err
	}
	if k > 0 {
		if err := npy.WriteFloat64File(filepath.Join(dir, "y_saved.npy"), []int{n, k, dim}, res.Saved); err != nil {
			return err
		}
	}
	codes := make([]int32, n)
	st := stats{
		Problem: pr.Name, Engine: res.Engine, RHS: rhs, Method: res.Method,
		RTol: res.Options.RTolVec[0], ATol: res.Options.ATolVec[0],
		N: n, Dim: dim, K: k, Workers: res.Workers,
		SolveSeconds: res.Elapsed.Seconds(),
		Statuses:     map[string]int{}, StatusCodes: map[string]int{},
		StateNames: pr.StateNames, ParamNames: pr.ParamNames,
	}
	for s, c := range statusCode {
		st.StatusCodes[s.String()] = int(c)
	}
	for i, s := range res.Status {
		codes[i] = statusCode[s]
		st.Statuses[s.String()]++
		if s != gradsolve.Success {
			st.Failed++
			if len(st.FirstFailures) < 10 {
				st.FirstFailures = append(st.FirstFailures, res.Err(i).Error())
			}
		}
	}
	tot := res.Total()
	st.Accepted, st.Rejected, st.FEvals = tot.Accepted, tot.Rejected, tot.FEvals
	if err := npy.WriteInt32File(filepath.Join(dir, "status.npy"), []int{n}, codes); err != nil {
		return err
	}
	st.WallSeconds = time.Since(wallStart).Seconds()
	if extra != nil {
		extra(&st)
	}
	return npy.WriteFileAtomic(filepath.Join(dir, "stats.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	})
}

// writeSens writes sens.npy (n×dim×m) and, with save times,
// sens_saved.npy (n×k×dim×m).
func writeSens(dir string, res *gradsolve.Result) error {
	if err := npy.WriteFloat64File(filepath.Join(dir, "sens.npy"), []int{res.N, res.Dim, res.NS}, res.S); err != nil {
		return err
	}
	if res.K > 0 {
		return npy.WriteFloat64File(filepath.Join(dir, "sens_saved.npy"), []int{res.N, res.K, res.Dim, res.NS}, res.SavedS)
	}
	return nil
}
