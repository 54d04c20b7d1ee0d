package systems

// zeroDfDt is the DfDt program of every built-in system: all of them are
// autonomous, so ∂f/∂t = 0. It writes zeros into out.
func zeroDfDt(_ float64, _, _, out []float64) {
	clear(out)
}
