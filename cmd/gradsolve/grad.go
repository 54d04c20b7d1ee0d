package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/ode"
	"github.com/gradsolve/gradsolve/router"
)

// parseSens turns --sens into sensitivity columns: parameter names,
// "all" (every parameter), "y0" (every initial value), "y0.NAME".
func parseSens(pr *ode.Problem, spec string) ([]gradsolve.Wrt, error) {
	var wrt []gradsolve.Wrt
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "all":
			for j := range pr.NumParams {
				wrt = append(wrt, gradsolve.Param(j))
			}
		case item == "y0":
			for i := range pr.Dim {
				wrt = append(wrt, gradsolve.InitialValue(i))
			}
		case strings.HasPrefix(item, "y0."):
			i := slices.Index(pr.StateNames, item[3:])
			if i < 0 {
				return nil, fmt.Errorf("--sens %q: %s has no state %q (states: %s)", spec, pr.Name, item[3:], strings.Join(pr.StateNames, ", "))
			}
			wrt = append(wrt, gradsolve.InitialValue(i))
		default:
			j := slices.Index(pr.ParamNames, item)
			if j < 0 {
				return nil, fmt.Errorf("--sens %q: %s has no parameter %q (parameters: %s; or all, y0, y0.NAME)", spec, pr.Name, item, strings.Join(pr.ParamNames, ", "))
			}
			wrt = append(wrt, gradsolve.Param(j))
		}
	}
	return wrt, nil
}

func gradCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	j, err := setup("grad", gradUsage, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	defer j.out.abort() // a failed run's staging directory (nothing after commit)
	pr, in, fl := j.pr, j.in, j.fl
	n, dim := in.ens.N, pr.Dim
	given := 0
	for _, v := range []string{fl.cot, fl.loss, fl.data} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return fmt.Errorf("grad: give exactly one of --loss sumsq, --data FILE.npy, --cot FILE.npy")
	}
	var loss gradsolve.Loss
	switch {
	case fl.loss != "":
		if fl.loss != "sumsq" {
			return fmt.Errorf("--loss %q: known losses: sumsq", fl.loss)
		}
		loss = gradsolve.SumSquares()
	case fl.data != "":
		l, err := load("data", fl.data)
		if err != nil {
			return err
		}
		if err := shapeErr(l, "(n × states)", []int{n, dim}, []int{dim}); err != nil {
			return err
		}
		loss = gradsolve.LeastSquares(l.a.Data, nil)
	default:
		l, err := load("cot", fl.cot)
		if err != nil {
			return err
		}
		if err := shapeErr(l, "(n × states)", []int{n, dim}); err != nil {
			return err
		}
		cot := l.a.Data
		// A linear loss L = Σ cot·y_final, whose value is reported.
		loss = func(res *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
			var v float64
			for i, c := range cot {
				if res.Status[i/dim] == gradsolve.Success {
					v += c * res.Y[i]
				}
			}
			return v, gradsolve.Cotangents{Y: cot}, nil
		}
	}
	mode, err := router.ParseMode(fl.mode)
	if err != nil {
		return fmt.Errorf("--mode: %w", err)
	}
	opts, bar := j.options(stderr)
	opts.Mode = mode
	// The result of the solve the loss saw: kept by a wrapper, since
	// forward mode returns no recording.
	var res *gradsolve.Result
	seen := func(r *gradsolve.Result) (float64, gradsolve.Cotangents, error) {
		res = r
		return loss(r)
	}
	lossValue, g, _, err := gradsolve.LossGradient(ctx, pr, in.ens, opts, seen)
	bar.finish()
	if err != nil {
		return j.userError(err)
	}
	if j.out != nil {
		if err := j.out.writeNpy(ctx, "grad_params.npy", []int{n, pr.NumParams}, g.P); err != nil {
			return err
		}
		if err := j.out.writeNpy(ctx, "grad_y0.npy", []int{n, dim}, g.Y0); err != nil {
			return err
		}
		err := writeOutputs(ctx, j.out, pr, in, res, j.rhs, j.wallStart, func(st *stats) {
			st.Loss = &lossValue
			st.Mode, st.Reason = g.Decision.Mode.String(), g.Decision.Reason
			if g.Decision.Mode == router.Reverse {
				st.RecordSeconds = res.Elapsed.Seconds()
				st.GradientSeconds = g.Elapsed.Seconds()
			} else {
				st.GradientSeconds = res.Elapsed.Seconds() // the sensitivities are the gradient
			}
		})
		if err != nil {
			return err
		}
	}
	if !fl.quietly {
		report(stdout, pr, in, res)
		fmt.Fprintf(stdout, "  loss %.10g; gradient by %s mode in %v\n  router: %s\n", lossValue, g.Decision.Mode, g.Elapsed.Round(1000), g.Decision.Reason)
		if n == 1 {
			for jx, name := range pr.ParamNames {
				fmt.Fprintf(stdout, "    dL/d%s = %.10g\n", name, g.P[jx])
			}
		}
		if fl.out != "" {
			fmt.Fprintf(stdout, "  wrote %s\n", fl.out)
		}
	}
	return nil
}
