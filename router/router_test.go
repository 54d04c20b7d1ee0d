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
	if d := Choose(Request{NumWrt: 1, NumOutputs: 1, Stiff: true}); !strings.Contains(d.Reason, "stiff") || d.Engine != "cpu-ros" {
		t.Errorf("stiff problem: %+v", d)
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
