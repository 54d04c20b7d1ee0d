package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gradsolve/gradsolve"
	"github.com/gradsolve/gradsolve/ode"
)

// parseWrt turns the value of --sens or --wrt, a comma-separated list,
// into columns in the order given: a parameter name; "params", every
// parameter in the file's order (--sens also takes "all" for it, as it
// always has); "y0", every initial value in the file's order;
// "y0.NAME", the initial value of state NAME. The keywords are read
// before the names. An empty item, a quantity named twice, and a spec
// that names no column at all ("params" for a problem without
// parameters, which the library would read as "not given") are errors
// naming the flag.
func parseWrt(pr *ode.Problem, flagName, spec string) ([]gradsolve.Wrt, error) {
	keywords := "params, y0, y0.NAME"
	if flagName == "sens" {
		keywords = "all, params, y0, y0.NAME"
	}
	var wrt []gradsolve.Wrt
	seen := map[gradsolve.Wrt]bool{}
	add := func(w gradsolve.Wrt) error {
		if seen[w] {
			return fmt.Errorf("--%s %q: %s is listed twice", flagName, spec, wrtName(pr, w))
		}
		seen[w] = true
		wrt = append(wrt, w)
		return nil
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		var ws []gradsolve.Wrt
		switch {
		case item == "":
			return nil, fmt.Errorf("--%s %q: empty item: want a comma-separated list of parameter names or %s", flagName, spec, keywords)
		case item == "params" || (item == "all" && flagName == "sens"):
			for j := range pr.NumParams {
				ws = append(ws, gradsolve.Param(j))
			}
		case item == "y0":
			for i := range pr.Dim {
				ws = append(ws, gradsolve.InitialValue(i))
			}
		case strings.HasPrefix(item, "y0."):
			i := slices.Index(pr.StateNames, item[3:])
			if i < 0 {
				return nil, fmt.Errorf("--%s %q: %s has no state %q (states: %s)", flagName, spec, pr.Name, item[3:], strings.Join(pr.StateNames, ", "))
			}
			ws = append(ws, gradsolve.InitialValue(i))
		default:
			j := slices.Index(pr.ParamNames, item)
			if j < 0 {
				hint := ""
				if item == "all" {
					hint = " (for every parameter and initial value say params,y0)"
				}
				return nil, fmt.Errorf("--%s %q: %s has no parameter %q (parameters: %s; or %s)%s", flagName, spec, pr.Name, item, strings.Join(pr.ParamNames, ", "), keywords, hint)
			}
			ws = append(ws, gradsolve.Param(j))
		}
		for _, w := range ws {
			if err := add(w); err != nil {
				return nil, err
			}
		}
	}
	if len(wrt) == 0 { // only "params" can name nothing
		return nil, fmt.Errorf("--%s %q names no column: %s has no parameters (say y0 or y0.NAME for the initial values)", flagName, spec, pr.Name)
	}
	return wrt, nil
}

// wrtName names a column as the flags do: the parameter's name, or
// y0.NAME (p[j] and y0[i] for a problem without names).
func wrtName(pr *ode.Problem, w gradsolve.Wrt) string {
	switch {
	case w.Y0 && pr.StateNames != nil:
		return "y0." + pr.StateNames[w.Index]
	case !w.Y0 && pr.ParamNames != nil:
		return pr.ParamNames[w.Index]
	}
	return w.String()
}
