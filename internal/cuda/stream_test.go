package cuda

import (
	"errors"
	"strings"
	"testing"
)

// TestStreams: against the fake driver, a stream's asynchronous copies
// through page-locked memory reach the device and come back, MemInfo
// reports the fake's memory, and each failing call is an *Error naming
// it, with the driver's name and text of the status.
func TestStreams(t *testing.T) {
	dev := fakeDevice(t)
	t.Setenv("FAKE_CUDA_FREE", "123456")
	if free, total, err := dev.MemInfo(); err != nil || free != 123456 || total != 2*123456 {
		t.Errorf("MemInfo = %d, %d, %v; want the fake's 123456, 246912", free, total, err)
	}
	st, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	h, err := dev.AllocHost(64)
	if err != nil {
		t.Fatal(err)
	}
	copy(h.Float64s(), []float64{1, 2, 3, 4, 5, 6, 7, 8})
	p, err := dev.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CopyIn(p, h, 8, 32); err != nil { // values 2..5
		t.Fatal(err)
	}
	if err := st.CopyOut(h, 0, p, 32); err != nil {
		t.Fatal(err)
	}
	if err := st.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if got := h.Float64s()[:5]; got[0] != 2 || got[3] != 5 || got[4] != 5 {
		t.Errorf("after the round trip: %v; want 2 3 4 5 5", got)
	}
	if len(h.Int64s()) != 8 || h.Len() != 64 {
		t.Errorf("Int64s %d values, Len %d", len(h.Int64s()), h.Len())
	}
	// Spans outside the memory are refused before any call.
	for _, c := range []struct{ off, n int }{{-1, 8}, {60, 8}, {0, 65}} {
		if err := st.CopyIn(p, h, c.off, c.n); err == nil || !strings.Contains(err.Error(), "of page-locked memory of 64 bytes") {
			t.Errorf("CopyIn of [%d, %d): %v", c.off, c.off+c.n, err)
		}
	}
	for _, c := range []struct {
		env, val, want string
		call           func() error
	}{
		{"FAKE_CUDA_ASYNC", "700", "cuda: cuMemcpyHtoDAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)", func() error { return st.CopyIn(p, h, 0, 8) }},
		{"FAKE_CUDA_ASYNC", "700", "cuda: cuMemcpyDtoHAsync: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)", func() error { return st.CopyOut(h, 0, p, 8) }},
		{"FAKE_CUDA_STREAM_SYNC", "719", "cuda: cuStreamSynchronize: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)", st.Synchronize},
		{"FAKE_CUDA_STREAM", "2", "cuda: cuStreamCreate: CUDA error 2", func() error { _, err := dev.NewStream(); return err }},
		{"FAKE_CUDA_HOSTALLOC", "2", "cuda: cuMemAllocHost(16 bytes): CUDA error 2", func() error { _, err := dev.AllocHost(16); return err }},
		{"FAKE_CUDA_LAUNCH", "719", "cuda: cuLaunchKernel(fake_scale): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)", func() error {
			m, err := dev.Module(scaleSrc, "k.cu")
			if err != nil {
				return err
			}
			f, err := m.Function("fake_scale")
			if err != nil {
				return err
			}
			return f.LaunchOn(st, 1, 1)
		}},
	} {
		t.Setenv(c.env, c.val)
		err := c.call()
		var e *Error
		if !errors.As(err, &e) || err.Error() != c.want {
			t.Errorf("%s=%s: %v; want %q", c.env, c.val, err, c.want)
		}
		t.Setenv(c.env, "")
	}
	if _, err := dev.AllocHost(0); err == nil {
		t.Error("AllocHost(0) succeeded")
	}
	if err := h.Free(); err != nil {
		t.Fatal(err)
	}
	if err := h.Free(); err != nil {
		t.Errorf("a second Free: %v", err)
	}
	if err := st.CopyIn(p, h, 0, 8); err == nil {
		t.Error("CopyIn from freed memory succeeded")
	}
	if err := st.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Free(p); err != nil {
		t.Fatal(err)
	}
}
