// Package sym builds right-hand sides as symbolic expression graphs and
// differentiates them.
//
// A Graph holds nodes — constants, states y_i, parameters p_j, the time
// t, seed inputs of derivative programs, and operations on earlier nodes
// — each created once: building the same operation on the same operands
// twice returns the same node (hash-consing), so common subexpressions
// are shared for free and a graph never grows quadratically. Operations
// on constants are folded with the same arithmetic the evaluators use,
// and the identities x+0, x·1, x·0, x/1, −(−x) are applied as nodes are
// built. Integer powers x^n, |n| ≤ 4, become multiplications.
//
// A Model names states and parameters, holds each state's derivative,
// defaults and a time span; it is what a problem file (package
// sym/parse) or a Go program builds. Derivative programs — J_y·v + J_p·w,
// wᵀJ_y and wᵀJ_p, the dense J_y, ∂f/∂t — are new outputs in the same
// graph (Tangent, Cotangent, JacobianY, TimeDerivative); package
// sym/tape compiles any list of outputs into straight-line register code.
//
// Errors in building (an expression from another graph, division by a
// literal zero, a name used twice) are sticky: the first is kept and
// returned by Model.Err and by every compile step, so a long chain of
// builder calls needs one check at the end.
package sym
