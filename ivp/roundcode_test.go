package ivp

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gradsolve/gradsolve/control"
	"github.com/gradsolve/gradsolve/internal/jit"
)

// roundCode is the code of EmitRest alone (no attempt before it): one
// round of the controller and the driver's common path over the errors,
// times and step sizes the test puts in the block.
type roundCode struct {
	r    *LaneRounds
	code *jit.Code
	args [18]unsafe.Pointer
}

func newRoundCode(t *testing.T, L int, ctl *control.PI, cst *control.LaneStates) *roundCode {
	r := newLaneRounds(L, ctl, cst)
	if r == nil {
		t.Skip("no machine code for the controller here")
	}
	var a jit.Asm
	a.Load64(jit.R14, jit.Mem{Base: jit.BX, Disp: 8 * 16})
	a.Load64(jit.R15, jit.Mem{Base: jit.BX, Disp: 8 * 17})
	r.EmitRest(&a, len(a.B))
	code, err := jit.NewCode(a.B)
	if err != nil {
		t.Skipf("no executable memory: %v", err)
	}
	rc := &roundCode{r: r, code: code}
	rc.args[16], rc.args[17] = r.Base(), r.Args()
	return rc
}

func (rc *roundCode) run() {
	rc.r.SetRounds(1)
	jit.Call16(rc.code.Addr(0), (*[16]unsafe.Pointer)(unsafe.Pointer(&rc.args)))
	runtime.KeepAlive(rc)
}

// roundLane is one lane's part of the block, as the Go loop of
// LaneDriver.Solve holds it.
type roundLane struct {
	act, last, plain, noSave, moved bool
	t, h, err, save, dir, hmax, t1  float64
	left                            int
}

// want is the Go loop's judgement of the lane's attempt and its checks
// before the next one (LaneDriver.Solve's common path, prepare's fast
// check), given the controller's verdict: what the code must write.
func (ln roundLane) want(accept, deferred bool, factor float64) (out roundLane, slowA, slowB bool, nAcc, nRej int) {
	out = ln
	if !ln.act {
		return out, false, false, 0, 0
	}
	ok := ln.err <= math.MaxFloat64
	judged := ok && !deferred
	accF := judged && accept && !ln.last && ln.plain && (ln.noSave || ln.dir*(ln.save-(ln.t+ln.h)) > 0)
	rejF := judged && !accept
	switch {
	case accF:
		out.t += ln.h
		out.h = ln.h * factor
		if math.Abs(out.h) > ln.hmax {
			out.h = ln.dir * ln.hmax
		}
		out.moved = true
		nAcc = 1
	case rejF:
		out.h = ln.h * factor
		out.moved = false
		nRej = 1
	default:
		return out, true, false, 0, 0
	}
	out.left--
	t, h := out.t, out.h
	if out.left > 0 {
		last := ln.dir*(t+float64(1.01*h)-ln.t1) >= 0
		if last {
			h = ln.t1 - t
		}
		if !(math.Abs(h) < control.MinStep(t) || t+h == t || math.IsNaN(h)) {
			out.h, out.last = h, last
			return out, false, false, nAcc, nRej
		}
	}
	return out, false, true, nAcc, nRej
}

// The code of a round gives every lane the Go loop's bits: its time and
// step size, flags and counts, and which lanes it leaves to the driver,
// over random lanes that hit the edges — the landing at t + 1.01·h = t1
// to the ulp, save times at t + h, the step floor, hmax, non-finite and
// subnormal errors, NaN steps, both directions, the budget's last
// attempts.
func TestRoundCodeMatchesDriver(t *testing.T) {
	const L = 8
	ctl := control.DefaultPI(5, 0.2, 10)
	cst := control.NewLaneStates(L)
	twin := control.NewLaneStates(L) // the same states, for NextLane in Go
	rc := newRoundCode(t, L, &ctl, cst)
	r := rc.r
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(vs ...float64) float64 { return vs[rng.IntN(len(vs))] }
	nudge := func(x float64) float64 { // x, or an ulp either side
		switch rng.IntN(3) {
		case 0:
			return math.Nextafter(x, math.Inf(1))
		case 1:
			return math.Nextafter(x, math.Inf(-1))
		}
		return x
	}
	seen := map[string]int{}
	for trial := range 20000 {
		var lanes [L]roundLane
		for l := range L {
			ctl.InitLane(cst, l)
			ctl.InitLane(twin, l)
			ln := roundLane{act: rng.IntN(8) != 0, last: rng.IntN(6) == 0, plain: rng.IntN(5) != 0, noSave: rng.IntN(2) == 0,
				moved: rng.IntN(2) == 0, dir: pick(1, -1), left: 1 + rng.IntN(3)}
			ln.t = pick(0, 1, 1e3, -7.5, 1e-300, 3e15) * (1 + rng.Float64())
			ln.h = ln.dir * pick(1e-3, 0.1, 1, 1e-14, 1e-310) * (0.5 + rng.Float64())
			if rng.IntN(50) == 0 {
				ln.h = math.NaN()
			}
			ln.err = pick(0, 0.3, 0.99, 1, 1.5, 30, math.Inf(1), math.NaN(), 1e-320, -1, 1e-200)
			ln.hmax = pick(math.Inf(1), 0.5, 1e-3)
			// t1: beyond the landing, at it (to the ulp) or before it.
			ln.t1 = ln.t + ln.dir*pick(100, 1e-3)
			if rng.IntN(2) == 0 {
				ln.t1 = nudge(ln.t + float64(1.01*ln.h*pick(0.5, 1, 2, 10)))
			}
			ln.save = nudge(ln.t + ln.h*pick(1, 0.5, 2))
			lanes[l] = ln
			// The controller's state: a history, so that accepted lanes
			// use errOld.
			if rng.IntN(2) == 0 {
				e := make([]float64, L)
				e[l] = pick(0.5, 2, 0.01)
				for _, s := range []*control.LaneStates{cst, twin} {
					ctl.NextLane(e, s, l, make([]bool, L), make([]float64, L))
				}
			}
		}
		for l, ln := range lanes {
			r.setMask(roundActive, l, ln.act)
			r.setMask(roundLast, l, ln.last)
			r.setMask(roundPlain, l, ln.plain)
			r.setMask(roundNoSave, l, ln.noSave)
			r.setMask(roundMoved, l, ln.moved)
			for k, v := range map[int]float64{roundT: ln.t, roundH: ln.h, roundErr: ln.err, roundNextSave: ln.save,
				roundDir: ln.dir, roundHMax: ln.hmax, roundT1: ln.t1, roundLeft: float64(ln.left)} {
				*r.at(k, l) = v
			}
			for _, k := range []int{roundNAtt, roundNMov, roundNAcc, roundNRej} {
				*r.at(k, l) = 0
			}
		}
		rc.run()
		for l, ln := range lanes {
			// The controller's verdict for the lane, from Next on the
			// Go twin of its state; a deferred lane is left to NextLane.
			deferred := r.mask(roundDefer, l)
			var accept bool
			var factor float64
			if ln.act {
				e, acc, fac := make([]float64, L), make([]bool, L), make([]float64, L)
				e[l] = ln.err
				ctl.NextLane(e, twin, l, acc, fac)
				accept, factor = acc[l], fac[l]
				if !deferred && (accept != r.mask(roundAccept, l) || math.Float64bits(factor) != math.Float64bits(*r.at(roundFactor, l))) {
					t.Fatalf("trial %d lane %d: controller (%v, %v), want Next's (%v, %v)", trial, l, r.mask(roundAccept, l), *r.at(roundFactor, l), accept, factor)
				}
			}
			want, slowA, slowB, nAcc, nRej := ln.want(accept, deferred, factor)
			if r.mask(roundSlowA, l) != slowA || r.mask(roundSlowB, l) != slowB {
				t.Fatalf("trial %d lane %d %+v: slow A %v B %v, want %v %v", trial, l, ln, r.mask(roundSlowA, l), r.mask(roundSlowB, l), slowA, slowB)
			}
			switch {
			case slowA:
				seen["left to the driver"]++
			case slowB:
				seen["checks due"]++
			case ln.act && nAcc == 1:
				seen["accepted"]++
			case ln.act:
				seen["rejected"]++
			}
			if want.last != ln.last && !slowB {
				seen["lands"]++
			}
			if !ln.act || slowA {
				want.h, want.t = ln.h, ln.t
			}
			bits := math.Float64bits
			got := roundLane{act: ln.act, last: r.mask(roundLast, l), plain: ln.plain, noSave: ln.noSave, moved: r.mask(roundMoved, l),
				t: *r.at(roundT, l), h: *r.at(roundH, l), err: ln.err, save: ln.save, dir: ln.dir, hmax: ln.hmax, t1: ln.t1,
				left: int(*r.at(roundLeft, l))}
			if bits(got.t) != bits(want.t) || bits(got.h) != bits(want.h) || got.last != want.last || got.moved != want.moved || got.left != want.left {
				t.Fatalf("trial %d lane %d %+v:\n got %+v\nwant %+v", trial, l, ln, got, want)
			}
			movedAct := 0
			if ln.act && ln.moved {
				movedAct = 1
			}
			act := 0
			if ln.act {
				act = 1
			}
			if int(*r.at(roundNAtt, l)) != act || int(*r.at(roundNMov, l)) != movedAct || int(*r.at(roundNAcc, l)) != nAcc || int(*r.at(roundNRej, l)) != nRej {
				t.Fatalf("trial %d lane %d: counts %v %v %v %v, want %d %d %d %d", trial, l, *r.at(roundNAtt, l), *r.at(roundNMov, l),
					*r.at(roundNAcc, l), *r.at(roundNRej, l), act, movedAct, nAcc, nRej)
			}
			if r.mask(roundPending, l) != (nAcc == 1) {
				t.Fatalf("trial %d lane %d: pending %v, want %v", trial, l, r.mask(roundPending, l), nAcc == 1)
			}
		}
	}
	t.Logf("lanes: %v", seen)
	for _, k := range []string{"left to the driver", "checks due", "accepted", "rejected", "lands"} {
		if seen[k] < 100 {
			t.Errorf("only %d lanes %s: the trials miss a path", seen[k], k)
		}
	}
}
