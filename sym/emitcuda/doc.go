// Package emitcuda turns a symbolic model's compiled programs (a
// tape.Set) into CUDA C++: the right-hand side f, and the fused
// forward-sensitivity program, as device function templates over the
// floating-point type (double, or float), and kernels that run the whole
// adaptive loop of an explicit Runge–Kutta method — one trajectory per
// thread, a grid-stride loop over the ensemble, the state and the stages
// in local arrays of compile-time size.
//
// The source mirrors the CPU engine cpu-erk operation for operation:
//
//   - each program is its tape's plain code in order, one const local
//     per instruction, with sym.Eval's arithmetic (program.go); every
//     product is gs_mul, __dmul_rn on the device, which is never fused
//     into a multiply–add whatever the compiler's flags;
//   - the math functions are package pmath's, ported step by step from
//     their straight-line forms (pmath.Program: the steps the CPU
//     engines' machine code runs), so they give pmath's bits
//     (pmath.go);
//   - the driver (erk.cuh) is package ivp's adaptive loop with erk's
//     stepper and package control's PI controller, error norm, initial
//     step, step floor and Pow, statement for statement: the landing on
//     t1, hmax, the step budget, the statuses (Success, MaxStepsReached,
//     NonFinite, StepUnderflow), the save times re-stepped from the
//     step's start, and the statistics (accepted, rejected, f
//     evaluations);
//   - the tableau's coefficients are constants in the method's struct
//     (erk.go), its stage sums written out over the nonzero
//     coefficients in erk's order.
//   - with Options.Rosenbrock, the Rosenbrock kernels (ros.cuh, ros.go)
//     are cpu-ros's: the same loop with ros's stepper, the dense J_y,
//     ∂f/∂t and (for sensitivities) the second-derivative programs
//     emitted from the tape, the LU with partial pivoting of ros/lu.go
//     per thread, singular W rejected, save times re-stepped or from
//     the continuous extension, Jacobian and LU counts; with
//     Options.RosRecord and RosAdjoint also record kernels (the mesh
//     as ivp.Mesh keeps it) and adjoint kernels (ros.Replayer.Reverse
//     on a recorded mesh, with the emitted cotangent programs).
//
// In double precision a kernel's results are therefore gradsolve.Solve's
// on cpu-erk bit for bit: final and saved states, sensitivities,
// statuses, times reached and statistics. The tests check this by CPU
// emulation: the source compiles with the system C++ compiler against
// the header of package internal/cudaemu, which emulates the CUDA
// built-ins and runs a launch as loops (docs/gpu.md).
//
// The source includes no header, so NVRTC can compile it as it is; on
// the device compile it with --fmad=false. Loading it with NVRTC and the
// driver API, and the engine that would, do not exist yet (docs/gpu.md).
package emitcuda
