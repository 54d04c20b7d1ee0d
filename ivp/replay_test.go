package ivp

import (
	"math"
	"testing"
)

// expStep is the exact step of y' = λ·y (p = [λ], one component), so
// that the replays can be checked against closed forms: a step of size
// h maps y to e^{λh}·y, and its adjoint sends ȳ_new to e^{λh}·ȳ_new for
// y and to h·e^{λh}·y·ȳ_new for λ. It keeps the calls it gets.
type expStep struct {
	steps, saves, reversed, partials int
	denseSeen                        int
}

func (e *expStep) Step(_ *Mesh, _ int, _, h float64, y, yn, p []float64) {
	e.steps++
	yn[0] = y[0] * math.Exp(p[0]*h)
}

func (e *expStep) Save(dst []float64, t, _, ts float64, y, p []float64) {
	e.saves++
	dst[0] = y[0] * math.Exp(p[0]*(ts-t))
}

// adjoint adds the cotangents through a step of size h from y.
func adjoint(h float64, y, p, cot, ybar, gp []float64) {
	g := math.Exp(p[0] * h)
	ybar[0] += g * cot[0]
	gp[0] += h * g * y[0] * cot[0]
}

func (e *expStep) ReverseStep(_ *Mesh, _ int, t, h float64, y, p, ynewBar, ybar, gp []float64, dense []SaveCot) {
	e.reversed++
	adjoint(h, y, p, ynewBar, ybar, gp)
	for _, sc := range dense { // saves computed from the step's start
		e.denseSeen++
		adjoint(sc.T-t, y, p, sc.Cot, ybar, gp)
	}
}

func (e *expStep) ReversePartial(t, ts float64, y, p, cot, ybar, gp []float64) {
	e.partials++
	adjoint(ts-t, y, p, cot, ybar, gp)
}

// mesh returns a recorded mesh over the given times (states filled in
// by Forward).
func mesh(times ...float64) *Mesh {
	ms := &Mesh{T: times, Y: make([]float64, len(times))}
	for k := range len(times) - 1 {
		ms.H = append(ms.H, times[k+1]-times[k])
	}
	return ms
}

// Forward walks the mesh with the family's step, a save at t0 being y0
// and one at a step's end the step's result; Reverse gives the gradient
// of L = cotY·y(t1) + Σ cot_i·y(save_i) that the closed form gives,
// y(t) = y0·e^{λ(t−t0)}: ∂L/∂y0 = Σ c·e^{λ(t−t0)}, ∂L/∂λ = Σ c·(t−t0)·y(t).
// The exact steps make the discrete map the exact flow, so the
// gradients agree to rounding: a few ulps per step of the products of
// exponentials, 1e-13 relative here. Save times inside steps are
// reversed as partial steps or, dense, within their step; both give the
// same gradient. Forwards and backwards.
func TestReplayWalks(t *testing.T) {
	for _, c := range []struct {
		name  string
		times []float64
		save  []float64
	}{
		{"forward", []float64{0, 0.3, 0.5, 0.9, 1}, []float64{0, 0, 0.1, 0.3, 0.4, 0.45, 0.9, 1}},
		{"backward", []float64{1, 0.6, 0.2, -0.5}, []float64{1, 0.6, 0.5, 0.3, -0.5}},
		{"no saves", []float64{0, 0.5, 1}, nil},
	} {
		lambda, y0 := -0.7, 2.0
		p := []float64{lambda}
		ms := mesh(c.times...)
		fs := &expStep{}
		yOut := make([]float64, 1)
		saved := make([]float64, len(c.save))
		Forward(fs, ms, 1, []float64{y0}, p, c.save, yOut, saved)
		t0, t1 := c.times[0], c.times[len(c.times)-1]
		exact := func(tt float64) float64 { return y0 * math.Exp(lambda*(tt-t0)) }
		near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-13*math.Abs(want) }
		if fs.steps != ms.Steps() || !near(yOut[0], exact(t1)) {
			t.Errorf("%s: %d steps, y(t1) = %v, want %v", c.name, fs.steps, yOut[0], exact(t1))
		}
		inner := 0
		for i, ts := range c.save {
			if !near(saved[i], exact(ts)) {
				t.Errorf("%s: save %d at %v = %v, want %v", c.name, i, ts, saved[i], exact(ts))
			}
			onMesh := false
			for _, tk := range c.times {
				onMesh = onMesh || tk == ts
			}
			if !onMesh {
				inner++
			}
		}
		if fs.saves != inner {
			t.Errorf("%s: %d Save calls, want %d (the saves off the mesh)", c.name, fs.saves, inner)
		}
		for k, tk := range ms.T {
			if !near(ms.Y[k], exact(tk)) {
				t.Errorf("%s: mesh state %d = %v, want %v", c.name, k, ms.Y[k], exact(tk))
			}
		}

		cotY := []float64{1.5}
		cotSaved := make([]float64, len(c.save))
		wantY0, wantL := cotY[0]*math.Exp(lambda*(t1-t0)), cotY[0]*(t1-t0)*exact(t1)
		for i, ts := range c.save {
			cotSaved[i] = 0.1 * float64(i+1)
			wantY0 += cotSaved[i] * math.Exp(lambda*(ts-t0))
			wantL += cotSaved[i] * (ts - t0) * exact(ts)
		}
		var w Walk
		for _, dense := range []bool{false, true} {
			rs := &expStep{}
			gy0, gp := make([]float64, 1), []float64{99} // Reverse clears gp
			w.Reverse(rs, ms, 1, dense, p, c.save, cotY, cotSaved, gy0, gp)
			if !near(gy0[0], wantY0) || !near(gp[0], wantL) {
				t.Errorf("%s dense=%v: ∂L/∂y0 = %v, ∂L/∂λ = %v; want %v, %v", c.name, dense, gy0[0], gp[0], wantY0, wantL)
			}
			if rs.reversed != ms.Steps() || (dense && (rs.partials != 0 || rs.denseSeen != inner)) || (!dense && (rs.partials != inner || rs.denseSeen != 0)) {
				t.Errorf("%s dense=%v: %d steps reversed, %d partial, %d dense saves", c.name, dense, rs.reversed, rs.partials, rs.denseSeen)
			}
		}
		// Without saved cotangents only the final state counts.
		gy0, gp := make([]float64, 1), make([]float64, 1)
		w.Reverse(&expStep{}, ms, 1, false, p, c.save, cotY, nil, gy0, gp)
		if want := cotY[0] * math.Exp(lambda*(t1-t0)); !near(gy0[0], want) || !near(gp[0], cotY[0]*(t1-t0)*exact(t1)) {
			t.Errorf("%s, no saved cotangents: %v, %v", c.name, gy0[0], gp[0])
		}
	}
}

// The walks allocate nothing once the Walk has grown.
func TestReplayDoesNotAllocate(t *testing.T) {
	ms := mesh(0, 0.3, 0.5, 1)
	save := []float64{0, 0.2, 0.5, 0.7}
	p, y0, yOut, saved := []float64{-1}, []float64{1}, make([]float64, 1), make([]float64, 4)
	cot, gy0, gp := []float64{1, 1, 1, 1}, make([]float64, 1), make([]float64, 1)
	var w Walk
	rs := &expStep{}
	if a := testing.AllocsPerRun(10, func() {
		Forward(rs, ms, 1, y0, p, save, yOut, saved)
		w.Reverse(rs, ms, 1, true, p, save, []float64{1}, cot, gy0, gp)
	}); a != 0 {
		t.Errorf("%v allocations per forward and reverse walk", a)
	}
}

// keepStep is expStep as a SegmentStepper: the checkpointed walk then
// recomputes every step of a segment with KeepStep, which keeps the
// step's start time and start state, and reverses it with ReverseKept,
// which checks them (bad counts the mismatches).
type keepStep struct {
	*expStep
	bad int
}

func (*keepStep) SegmentValues() int { return 2 }

func (k *keepStep) KeepStep(t, h float64, y, yn, p, keep []float64) {
	k.Step(nil, 0, t, h, y, yn, p)
	keep[0], keep[1] = t, y[0]
}

func (k *keepStep) ReverseKept(t, h float64, y, p, keep, ynewBar, ybar, gp []float64, dense []SaveCot) {
	if keep[0] != t || keep[1] != y[0] {
		k.bad++
	}
	k.ReverseStep(nil, 0, t, h, y, p, ynewBar, ybar, gp, dense)
}

// A checkpointed mesh (Checkpoint = c) keeps the states at T[0], T[c],
// T[2c], … as it is filled; Walk.Forward on it gives the final state,
// the saves and the checkpoints of Forward on the full mesh bit for bit,
// and Walk.Reverse the gradients of the full walk bit for bit (every
// step and sum is the same, in the same order), for segments of every
// length — c = 1 (every state), 2, 3, 7, the number of steps, more —
// with saves at t0, at step ends and inside steps, dense or partial.
// It recomputes c − 1 steps of every c (c of every c for a
// SegmentStepper, which reverses each from what its KeepStep kept),
// reverses every step once, and allocates nothing once grown.
func TestCheckpointedWalks(t *testing.T) {
	// A mesh as the driver records it: t_{k+1} = t_k + h_k, and the
	// last step, of size t1 − t, lands on t1.
	const t1 = 0.73
	full := &Mesh{T: []float64{0}}
	for k := 1; ; k++ {
		t, h := full.T[k-1], 0.01+0.003*float64(k%7)
		if t+h >= t1 {
			full.T, full.H = append(full.T, t1), append(full.H, t1-t)
			break
		}
		full.T, full.H = append(full.T, t+h), append(full.H, h)
	}
	full.Y = make([]float64, len(full.T))
	times := full.T
	save := []float64{0, 0, times[3], 0.5 * (times[5] + times[6]), times[9] + 0.001, times[14], 0.5 * (times[30] + times[31]), t1}
	p, y0 := []float64{-0.7}, []float64{2}
	yOut, saved := make([]float64, 1), make([]float64, len(save))
	Forward(&expStep{}, full, 1, y0, p, save, yOut, saved)
	steps := full.Steps()
	cotY, cotSaved := []float64{1.5}, make([]float64, len(save))
	for i := range cotSaved {
		cotSaved[i] = 0.1*float64(i+1) - 0.35
	}
	var w Walk
	var want [2][2]float64 // [dense] ∂L/∂y0, ∂L/∂λ of the full walk
	for i, dense := range []bool{false, true} {
		gy0, gp := make([]float64, 1), make([]float64, 1)
		w.Reverse(&expStep{}, full, 1, dense, p, save, cotY, cotSaved, gy0, gp)
		want[i] = [2]float64{gy0[0], gp[0]}
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for _, c := range []int{1, 2, 3, 7, steps, steps + 5} {
		ms := &Mesh{Checkpoint: c}
		ms.Reset(times[0], y0)
		for k := range steps {
			if !ms.Push(full.H[k], full.T[k+1], full.Y[k+1:k+2]) {
				t.Fatal("Push refused")
			}
		}
		if rows := len(ms.Y); rows != steps/ms.Every()+1 {
			t.Errorf("c = %d: %d states kept, want %d", c, rows, steps/ms.Every()+1)
		}
		for j := range len(ms.Y) {
			if k := j * ms.Every(); !same(ms.State(k, 1)[0], full.Y[k]) || !same(ms.T[j], full.T[k]) {
				t.Errorf("c = %d: checkpoint %d: state %v at %v, want %v at %v", c, j, ms.State(k, 1)[0], ms.T[j], full.Y[k], full.T[k])
			}
		}
		if len(ms.T) != len(ms.Y) && c >= 2 || !same(ms.End, t1) {
			t.Errorf("c = %d: %d times kept for %d states, End %v", c, len(ms.T), len(ms.Y), ms.End)
		}
		for a := 0; a < steps; a += ms.Every() {
			b := min(a+ms.Every(), steps)
			for j, tt := range ms.Times(a, b, nil) {
				if !same(tt, full.T[a+j]) {
					t.Errorf("c = %d: Times(%d, %d)[%d] = %v, want %v", c, a, b, j, tt, full.T[a+j])
				}
			}
		}
		// The forward walk at another point, then back at the first:
		// the checkpoints follow, and the results are Forward's.
		gotOut, gotSaved := make([]float64, 1), make([]float64, len(save))
		w.Forward(&expStep{}, ms, 1, []float64{3}, p, save, gotOut, gotSaved)
		if c >= 2 && len(ms.Y) > 1 && same(ms.Y[1], full.Y[c]) {
			t.Errorf("c = %d: the forward walk at y0 = 3 left the checkpoint at its old value", c)
		}
		fs := &expStep{}
		w.Forward(fs, ms, 1, y0, p, save, gotOut, gotSaved)
		if !same(gotOut[0], yOut[0]) || fs.steps != steps {
			t.Errorf("c = %d: y(t1) = %v in %d steps, want %v in %d", c, gotOut[0], fs.steps, yOut[0], steps)
		}
		for i := range save {
			if !same(gotSaved[i], saved[i]) {
				t.Errorf("c = %d: save %d = %v, want %v", c, i, gotSaved[i], saved[i])
			}
		}
		for j := range len(ms.Y) {
			if k := j * ms.Every(); !same(ms.Y[j], full.Y[k]) {
				t.Errorf("c = %d: checkpoint at T[%d] = %v after the forward walk, want %v", c, k, ms.Y[j], full.Y[k])
			}
		}
		segments := (steps + ms.Every() - 1) / ms.Every()
		for i, dense := range []bool{false, true} {
			for _, keep := range []bool{false, true} {
				es := &expStep{}
				var rs ReverseStepper = es
				wantSteps := steps - segments // a segment's last state is not needed
				ks := &keepStep{expStep: es}
				if keep {
					rs, wantSteps = ks, steps
				}
				if c == 1 {
					wantSteps = 0
				}
				gy0, gp := make([]float64, 1), []float64{99}
				w.Reverse(rs, ms, 1, dense, p, save, cotY, cotSaved, gy0, gp)
				if !same(gy0[0], want[i][0]) || !same(gp[0], want[i][1]) {
					t.Errorf("c = %d, dense %v, segment stepper %v: ∂L/∂y0 = %v, ∂L/∂λ = %v; want %v, %v", c, dense, keep, gy0[0], gp[0], want[i][0], want[i][1])
				}
				if es.reversed != steps || es.steps != wantSteps || ks.bad != 0 {
					t.Errorf("c = %d, dense %v, segment stepper %v: %d steps reversed, %d recomputed, %d from the wrong values kept; want %d, %d, 0", c, dense, keep, es.reversed, es.steps, ks.bad, steps, wantSteps)
				}
				if a := testing.AllocsPerRun(5, func() { w.Reverse(rs, ms, 1, dense, p, save, cotY, cotSaved, gy0, gp) }); a != 0 {
					t.Errorf("c = %d: %v allocations per reverse walk", c, a)
				}
			}
		}
		if a := testing.AllocsPerRun(5, func() { w.Forward(fs, ms, 1, y0, p, save, gotOut, gotSaved) }); a != 0 {
			t.Errorf("c = %d: %v allocations per forward walk", c, a)
		}
	}
}

// TestReverseSkipsUnreachedSaves: a trajectory that failed part way has
// a mesh ending before some of its save times. Those states were never
// computed, so their cotangents reach nothing: the walk's gradient is
// that of the reached saves alone, exactly, also when the Walk's owner
// storage last held a longer mesh's assignment (reused, as the workers
// reuse it from trajectory to trajectory).
func TestReverseSkipsUnreachedSaves(t *testing.T) {
	p := []float64{-0.7}
	full := mesh(0, 0.3, 0.5, 0.9, 1)
	short := mesh(0, 0.3, 0.5) // failed at 0.5
	save := []float64{0, 0.2, 0.3, 0.45, 0.7, 0.9, 1}
	reached := save[:4]
	cotY := []float64{1.5}
	cotSaved := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}
	yOut := make([]float64, 1)
	Forward(&expStep{}, full, 1, []float64{2}, p, save, yOut, make([]float64, len(save)))
	Forward(&expStep{}, short, 1, []float64{2}, p, reached, yOut, make([]float64, len(reached)))
	if got := short.SaveOwners(save, nil); got[4] != Unreached || got[5] != Unreached || got[6] != Unreached || got[3] != 1 {
		t.Fatalf("owners %v: want 1 for 0.45 and Unreached past the mesh's end 0.5", got)
	}
	for _, dense := range []bool{false, true} {
		var w Walk
		gy0, gp := make([]float64, 1), make([]float64, 1)
		w.Reverse(&expStep{}, full, 1, dense, p, save, cotY, cotSaved, gy0, gp) // fills the owners
		w.Reverse(&expStep{}, short, 1, dense, p, save, cotY, cotSaved, gy0, gp)
		var fresh Walk
		wy0, wp := make([]float64, 1), make([]float64, 1)
		fresh.Reverse(&expStep{}, short, 1, dense, p, reached, cotY, cotSaved[:len(reached)], wy0, wp)
		if gy0[0] != wy0[0] || gp[0] != wp[0] {
			t.Errorf("dense=%v: ∂L/∂y0 = %v, ∂L/∂λ = %v; want those of the reached saves %v, %v", dense, gy0[0], gp[0], wy0[0], wp[0])
		}
	}
}
