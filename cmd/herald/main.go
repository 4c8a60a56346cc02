// Command herald runs the Herald notification delivery engine. Everything
// lives in internal/cli; see `herald --help`.
package main

import (
	"os"

	"github.com/heraldhq/herald/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
