package quintessence

// DESI DR2 BAO measurements, all tracers combined: 13 values at 7
// effective redshifts and their 13×13 covariance (block diagonal, one
// block per tracer). Numbers as distributed by the public repository
// CobayaSampler/bao_data, folder desi_bao_dr2, files
// desi_gaussian_bao_ALL_GCcomb_{mean,cov}.txt (commit bb0c1c9), from
//
//	DESI Collaboration, "DESI DR2 Results II: Measurements of Baryon
//	Acoustic Oscillations and Cosmological Constraints",
//	arXiv:2503.14738; and "DESI DR2 Results I: Baryon Acoustic
//	Oscillations from the Lyman Alpha Forest", arXiv:2503.14739.
//
// Cite the DESI papers when these numbers are used. The Lyman-α pair
// lists D_H before D_M, as the source file does.

// Observable is the kind of a BAO measurement.
type Observable int

// The BAO observables, each divided by the sound horizon r_d.
const (
	DV Observable = iota // D_V/r_d
	DM                   // D_M/r_d
	DH                   // D_H/r_d
)

func (o Observable) String() string { return [...]string{"DV_over_rd", "DM_over_rd", "DH_over_rd"}[o] }

// Measurement is one DESI DR2 BAO data point.
type Measurement struct {
	Z     float64
	Value float64
	Kind  Observable
}

// DESIDR2 holds the 13 measurements in the source file's order.
var DESIDR2 = [13]Measurement{
	{0.295, 7.94167639, DV},
	{0.510, 13.58758434, DM},
	{0.510, 21.86294686, DH},
	{0.706, 17.35069094, DM},
	{0.706, 19.45534918, DH},
	{0.934, 21.57563956, DM},
	{0.934, 17.64149464, DH},
	{1.321, 27.60085612, DM},
	{1.321, 14.17602155, DH},
	{1.484, 30.51190063, DM},
	{1.484, 12.81699964, DH},
	{2.33, 8.631545674846294, DH},
	{2.33, 38.988973961958784, DM},
}

// DESIDR2Cov returns the 13×13 covariance of DESIDR2, row-major.
func DESIDR2Cov() []float64 {
	diag := [13]float64{5.78998687e-03, 2.83473742e-02, 1.83928040e-01, 3.23752442e-02, 1.11469198e-01,
		2.61732816e-02, 4.04183878e-02, 1.05336516e-01, 5.04233092e-02, 5.83020277e-01,
		2.68336193e-01, 1.02136194e-02, 2.82685779e-01}
	off := map[[2]int]float64{
		{1, 2}: -3.26062007e-02, {3, 4}: -2.37445646e-02, {5, 6}: -1.12938006e-02,
		{7, 8}: -2.90308418e-02, {9, 10}: -1.95215562e-01, {11, 12}: -2.31395216e-02,
	}
	c := make([]float64, 13*13)
	for i, v := range diag {
		c[i*13+i] = v
	}
	for ij, v := range off {
		c[ij[0]*13+ij[1]] = v
		c[ij[1]*13+ij[0]] = v
	}
	return c
}
