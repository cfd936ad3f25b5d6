// x_go: a Go program linked with the C library (cgo), as most are: 0.05 s of work, one line,
// then the Go runtime's raw exit_group, which no wrapper of the shim sees.
package main

// #include <stdlib.h>
import "C"

import "fmt"

//go:noinline
func burnGo(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	_ = C.abs(-1)
	fmt.Println("go done", burnGo(50000000) != 0)
}
