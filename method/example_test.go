package method_test

import (
	"fmt"

	"github.com/gradsolve/gradsolve/method"
)

// ExampleByName looks up each built-in method by its lower-case name and
// prints its shape.
func ExampleByName() {
	for _, name := range []string{"tsit5", "dp5", "vern7", "dp8"} {
		tb, err := method.ByName(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-5s  stages %2d  order %d(%d)  FSAL %v\n",
			tb.Name, tb.Stages(), tb.Order, tb.ErrOrder, tb.FSAL())
	}
	_, err := method.ByName("rk4")
	fmt.Println(err)
	// Output:
	// Tsit5  stages  7  order 5(4)  FSAL true
	// DP5    stages  7  order 5(4)  FSAL true
	// Vern7  stages 10  order 7(6)  FSAL false
	// DP8    stages 13  order 8(5)  FSAL true
	// method: unknown method "rk4": known methods are tsit5, dp5, vern7, dp8
}
