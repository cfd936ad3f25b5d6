// e_cgo.go: a cgo-linked Go program (tests/t_tools_symbolize_go.sh). Linked with gcc, its
// .debug_aranges lists only the C compilation units, which made libdwfl name every Go address
// with a line of runtime/cgo's C code. It burns CPU in a Go function and in a C function, sleeps
// past the shim's next flush (Go leaves by a raw exit_group, which no wrapper sees), and prints
// one line. Argument: the seconds of CPU to burn in each of the two.
package main

/*
#include <time.h>

static double c_burn(double secs)
{
	volatile double x = 0;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
	while (clock() < end)
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
	return x;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func goBurn(secs float64) float64 {
	x := 0.0
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			x += float64(i%7) * 0.5
		}
	}
	return x
}

func main() {
	secs := 0.3
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	g := goBurn(secs)
	c := float64(C.c_burn(C.double(secs)))
	time.Sleep(400 * time.Millisecond)
	fmt.Println("e_cgo", g > 0, c > 0)
}
