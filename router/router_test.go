package router

import (
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
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
		d := Choose(c.req)
		if d.Mode != c.want || d.Engine != "cpu-erk" || !strings.Contains(d.Reason, "estimated cost") {
			t.Errorf("%+v: %+v, want %v", c.req, d, c.want)
		}
		if d.Overridden != (c.req.Mode != Auto) {
			t.Errorf("%+v: Overridden = %v", c.req, d.Overridden)
		}
	}
	// The Decision names the engine the request says will run, with its
	// reason; the cost model sees the columns asked for.
	d := Choose(Request{NumWrt: 1, NumOutputs: 1, Engine: "cpu-ros", EngineReason: "Rodas5P requested"})
	if d.Engine != "cpu-ros" || !strings.Contains(d.Reason, "engine cpu-ros: Rodas5P requested") || !strings.Contains(d.Reason, "(1 columns)") {
		t.Errorf("Rosenbrock engine: %+v", d)
	}
	if d := Choose(Request{NumWrt: 1, NumOutputs: 1, Engine: "cpu-erk", EngineReason: "Tsit5 requested"}); d.Engine != "cpu-erk" || !strings.HasSuffix(d.Reason, "engine cpu-erk: Tsit5 requested") {
		t.Errorf("explicit engine: %+v", d)
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
