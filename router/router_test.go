package router

import (
	"errors"
	"strings"
	"testing"

	"github.com/gradsolve/gradsolve/internal/engine"
)

func TestChoose(t *testing.T) {
	// Costs of the cases' engine: a sensitivity column 1 solve, a
	// record 0.8, a gradient 2.1.
	costs := engine.Costs{SensColumn: 1, Record: 0.8, Gradient: 2.1, Source: "the test's"}
	erk := Route{Engine: "cpu-erk", Reason: "the registered engine for explicit Runge–Kutta methods", Costs: costs}
	cases := []struct {
		req  Request
		want Mode
	}{
		{Request{NumWrt: 1, NumOutputs: 3}, Forward},    // 2.0 vs 7.1
		{Request{NumWrt: 2, NumOutputs: 1}, Reverse},    // 3.0 vs 2.9
		{Request{NumWrt: 1, NumOutputs: 1}, Forward},    // 2.0 vs 2.9
		{Request{NumWrt: 2308, NumOutputs: 1}, Reverse}, // a neural right-hand side
		{Request{NumWrt: 6, NumOutputs: 6}, Forward},    // a full 6×6 Jacobian: 7 vs 13.4
		{Request{NumWrt: 1, NumOutputs: 3, Mode: Reverse}, Reverse},
	}
	for _, c := range cases {
		c.req.Forward, c.req.Reverse = erk, erk
		d, err := Choose(c.req)
		if err != nil || d.Mode != c.want || d.Engine != "cpu-erk" || d.EngineReason != erk.Reason || !strings.Contains(d.Reason, "estimated cost") {
			t.Errorf("%+v: %+v, %v, want %v", c.req, d, err, c.want)
		}
		if d.Overridden != (c.req.Mode != Auto) {
			t.Errorf("%+v: Overridden = %v", c.req, d.Overridden)
		}
		if !strings.Contains(d.Reason, "(costs: the test's)") {
			t.Errorf("%+v: the reason %q does not say whose costs", c.req, d.Reason)
		}
	}
	// Each route's engine's own costs decide: two columns and a scalar
	// loss are cheaper forward where a column costs 0.5 solves (2.0 vs
	// 2.9), in reverse where it costs 1 (3.0 vs 2.9).
	cheapCols := erk
	cheapCols.Costs.SensColumn = 0.5
	if d, err := Choose(Request{NumWrt: 2, NumOutputs: 1, Forward: cheapCols, Reverse: cheapCols}); err != nil || d.Mode != Forward ||
		!strings.Contains(d.Reason, "forward sensitivities 2.0 (2 columns), reverse replay 2.9") {
		t.Errorf("cheap columns: %+v, %v", d, err)
	}
	// A route without costs is weighed with engine.DefaultCosts, and
	// the reason names them.
	if d, err := Choose(Request{NumWrt: 1, NumOutputs: 1, Forward: Route{Engine: "x"}, Reverse: Route{Engine: "x"}}); err != nil ||
		!strings.Contains(d.Reason, engine.DefaultCosts.Source) {
		t.Errorf("no costs: %+v, %v", d, err)
	}
	// The Decision names the engine of the mode it chose, with the
	// method's reason; the cost model sees the columns asked for.
	ros := Route{Engine: "cpu-ros", Reason: "the registered engine for Rosenbrock methods", Costs: costs}
	d, err := Choose(Request{NumWrt: 1, NumOutputs: 1, Forward: ros, Reverse: ros, MethodReason: "Rodas5P requested"})
	if err != nil || d.Engine != "cpu-ros" || !strings.Contains(d.Reason, "engine cpu-ros: Rodas5P requested") || !strings.Contains(d.Reason, "(1 columns)") {
		t.Errorf("Rosenbrock engine: %+v, %v", d, err)
	}
	if d, err := Choose(Request{NumWrt: 1, NumOutputs: 1, Forward: erk, Reverse: erk, MethodReason: "Tsit5 requested"}); err != nil || d.Engine != "cpu-erk" || !strings.HasSuffix(d.Reason, "engine cpu-erk: Tsit5 requested") {
		t.Errorf("explicit engine: %+v, %v", d, err)
	}

	// A mode that cannot run: Auto takes the other, and says why; a
	// named mode that cannot run, or no mode at all, is the error.
	noVJP := errors.New("m: Record needs a cotangent program")
	noJVP := errors.New("m: sensitivities need a tangent program")
	d, err = Choose(Request{NumWrt: 2308, NumOutputs: 1, Forward: erk, Reverse: Route{Err: noVJP}})
	if err != nil || d.Mode != Forward || !strings.Contains(d.Reason, "reverse mode cannot run (m: Record needs a cotangent program)") {
		t.Errorf("reverse cannot run: %+v, %v", d, err)
	}
	d, err = Choose(Request{NumWrt: 1, NumOutputs: 1, Forward: Route{Err: noJVP}, Reverse: erk})
	if err != nil || d.Mode != Reverse || d.Engine != "cpu-erk" {
		t.Errorf("forward cannot run: %+v, %v", d, err)
	}
	if _, err := Choose(Request{NumWrt: 1, NumOutputs: 1, Forward: erk, Reverse: Route{Err: noVJP}, Mode: Reverse}); err != noVJP {
		t.Errorf("reverse named and unavailable: %v", err)
	}
	// Neither: the error of the mode the costs prefer (forward here).
	if _, err := Choose(Request{NumWrt: 1, NumOutputs: 1, Forward: Route{Err: noJVP}, Reverse: Route{Err: noVJP}}); err != noJVP {
		t.Errorf("neither mode: %v", err)
	}

	for _, s := range []string{"auto", "forward", "reverse"} {
		if m, err := ParseMode(s); err != nil || m.String() != s {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("sideways"); err == nil {
		t.Error("ParseMode accepted nonsense")
	}
}
