package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressBar draws "[=====>    ] 45% 4500/10000 12s" on a terminal,
// only once a run has lasted longer than delay, and only when the
// writer is a terminal (a character device).
type progressBar struct {
	w       io.Writer
	on      bool
	start   time.Time
	delay   time.Duration
	drawn   bool
	lastPct int
}

func newProgressBar(w io.Writer, delay time.Duration) *progressBar {
	b := &progressBar{w: w, start: time.Now(), delay: delay, lastPct: -1}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			b.on = true
		}
	}
	return b
}

// update is the solve's progress callback (called from one goroutine).
func (b *progressBar) update(done, total int) {
	if !b.on || time.Since(b.start) < b.delay || total == 0 {
		return
	}
	pct := 100 * done / total
	if pct == b.lastPct && done != total {
		return
	}
	b.lastPct = pct
	const width = 30
	fill := width * done / total
	bar := strings.Repeat("=", fill)
	if fill < width {
		bar += ">" + strings.Repeat(" ", width-fill-1)
	}
	fmt.Fprintf(b.w, "\r[%s] %3d%% %d/%d %s", bar, pct, done, total, time.Since(b.start).Round(time.Second))
	b.drawn = true
}

// finish ends the bar's line if one was drawn.
func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
