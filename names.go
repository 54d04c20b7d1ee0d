package gradsolve

// nameOf is the problem's name in messages: Problem.Name, or "unnamed
// problem" for a problem without one, so that no message starts with an
// empty name.
func nameOf(prob *Problem) string {
	if prob.Name == "" {
		return "unnamed problem"
	}
	return prob.Name
}
