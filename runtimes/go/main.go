// Command iolab-go is the Go runtime's target (runtimes/go/README.md): the launcher protocol of
// runtimes/README.md for HTTP models, and `--spec FILE.json` for batches.
package main

import (
	"os"

	"iolab/runtimes/go/internal/launcher"
)

func main() { os.Exit(launcher.Main(os.Args[1:])) }
