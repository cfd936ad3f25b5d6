// Linked with cgo, as a Go program that uses a C library is: dynamically linked, so the shim can
// be preloaded into it. CGO_ENABLED=0 leaves this file out (a static binary).

package main

import "C"
