package ode

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	f := func(t float64, y, p, dy []float64) {}
	good := Problem{Name: "p", Dim: 2, NumParams: 1, F: f, StateNames: []string{"a", "b"}, ParamNames: []string{"k"},
		Y0: []float64{1, 2}, P: []float64{3}}
	if err := good.Validate(); err != nil {
		t.Fatalf("good problem: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(p *Problem)
		want   string
	}{
		{"dim", func(p *Problem) { p.Dim = 0 }, "Dim = 0"},
		{"params", func(p *Problem) { p.NumParams = -1 }, "NumParams = -1"},
		{"F", func(p *Problem) { p.F = nil }, "F is nil"},
		{"state names", func(p *Problem) { p.StateNames = []string{"a"} }, "1 state names"},
		{"param names", func(p *Problem) {
			p.ParamNames = nil
			p.NumParams = 2
			p.P = []float64{1, 2}
			p.ParamNames = []string{"k"}
		}, "1 parameter names"},
		{"y0 length", func(p *Problem) { p.Y0 = []float64{1} }, "default Y0 has length 1"},
		{"p length", func(p *Problem) { p.P = []float64{1, 2} }, "default P has length 2"},
		{"y0 NaN", func(p *Problem) { p.Y0 = []float64{1, math.NaN()} }, "Y0[1] = NaN"},
		{"p Inf", func(p *Problem) { p.P = []float64{math.Inf(-1)} }, "P[0] = -Inf"},
	}
	for _, c := range cases {
		p := good
		c.mutate(&p)
		err := p.Validate()
		if err == nil || !errors.Is(err, ErrProblem) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one wrapping ErrProblem that mentions %q", c.name, err, c.want)
		}
	}
	var nilp *Problem
	if err := nilp.Validate(); err == nil {
		t.Error("nil problem: no error")
	}
}

func TestStatus(t *testing.T) {
	for s := NotRun; s <= Cancelled; s++ {
		if s.String() == "" || strings.HasPrefix(s.String(), "Status(") || s.Message() == "" {
			t.Errorf("status %d lacks a name or message", s)
		}
		if s.OK() != (s == Success) {
			t.Errorf("%v.OK() = %v", s, s.OK())
		}
	}
	if Status(200).String() != "Status(200)" {
		t.Errorf("unknown status prints %q", Status(200).String())
	}
	e := &TrajectoryError{Index: 17, Status: StepUnderflow, T: 3.25, H: 1e-16}
	if msg := e.Error(); !strings.Contains(msg, "trajectory 17") || !strings.Contains(msg, "t = 3.25") || !strings.Contains(msg, "underflow") {
		t.Errorf("TrajectoryError message %q", msg)
	}
	if (Stats{Accepted: 3, Rejected: 2}).Attempts() != 5 {
		t.Error("Attempts")
	}
}

// ProgramSet answers from Offers where a problem declares it, probes
// Programs once where it does not, and is empty without Programs.
func TestProgramSet(t *testing.T) {
	f := func(_ float64, _, _, dy []float64) { dy[0] = 0 }
	jvp := func(_ float64, _, _, _, _, out []float64) { out[0] = 0 }
	calls := 0
	pr := &Problem{Name: "p", Dim: 1, F: f, Programs: func() *Programs {
		calls++
		return &Programs{F: f, JVP: jvp}
	}}
	if got := pr.ProgramSet(); got != HasJVP || calls != 1 {
		t.Errorf("undeclared: %v after %d calls, want JVP after 1", got, calls)
	}
	pr.Offers = HasJVP
	if got := pr.ProgramSet(); got != HasJVP || calls != 1 {
		t.Errorf("declared: %v after %d calls, want JVP after none more", got, calls)
	}
	if err := pr.Validate(); err != nil {
		t.Error(err)
	}
	pr.Offers = 1 << 12
	if err := pr.Validate(); err == nil {
		t.Error("Validate accepted Offers with a bit of no program")
	}
	if got := (&Problem{Offers: AllPrograms}).ProgramSet(); got != 0 {
		t.Errorf("no Programs: %v", got)
	}
	for s, want := range map[ProgramSet]string{0: "none", HasJVP | HasJacY: "JVP|JacY", AllPrograms: "JVP|VJP|JacY|DfDt|JVPJacY|JVPDfDt|JVPVJP|DfDtVJP|FLanes"} {
		if s.String() != want {
			t.Errorf("%#x: %q, want %q", uint16(s), s.String(), want)
		}
	}
	if !AllPrograms.Has(HasVJP|HasDfDtVJP) || HasJVP.Has(HasJVP|HasVJP) {
		t.Error("Has")
	}
}
