// go_burn [N]: a Go program with one hot function, main.burn, for tests/t_shim_realworld.sh.
// It prints burn's result and ends with os.Exit (a raw exit_group, as every Go program ends).
// Built twice: with cgo (cgo.go, so it is dynamically linked and the shim is preloaded into it)
// and without (static: LD_PRELOAD never reaches it).
package main

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func burn(n int) uint64 {
	var s uint64 = 1
	for i := 0; i < n; i++ {
		s = s*6364136223846793005 + uint64(i)
	}
	return s
}

func main() {
	n := 300000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	fmt.Println(burn(n))
	os.Exit(0)
}
