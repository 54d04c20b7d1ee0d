package quintessence

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The data in desi.go are a faithful transcription of the distributed
// files (shared/reference/data beside the project, when present).
func TestDESITranscription(t *testing.T) {
	const dir = "../../../shared/reference/data/"
	mean, err := os.ReadFile(dir + "desi_dr2_bao_mean.txt")
	if err != nil {
		t.Skipf("no shared data to compare with: %v", err)
	}
	var rows [][]string
	sc := bufio.NewScanner(strings.NewReader(string(mean)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && !strings.HasPrefix(f[0], "#") {
			rows = append(rows, f)
		}
	}
	if len(rows) != 13 {
		t.Fatalf("%d rows in the mean file", len(rows))
	}
	kinds := map[string]Observable{"DV_over_rs": DV, "DM_over_rs": DM, "DH_over_rs": DH}
	for i, f := range rows {
		z, _ := strconv.ParseFloat(f[0], 64)
		v, _ := strconv.ParseFloat(f[1], 64)
		m := DESIDR2[i]
		if m.Z != z || m.Value != v || m.Kind != kinds[f[2]] {
			t.Errorf("row %d: %v, file %v", i, m, f)
		}
	}
	cov, err := os.ReadFile(dir + "desi_dr2_bao_cov.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := DESIDR2Cov()
	k := 0
	for _, f := range strings.Fields(string(cov)) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatal(err)
		}
		if c[k] != v {
			t.Errorf("covariance entry %d: %v, file %v", k, c[k], v)
		}
		k++
	}
	if k != 169 {
		t.Errorf("%d covariance entries in the file", k)
	}
}
