// Command neardup finds near-duplicate text with SimHash fingerprints.
//
// Run "neardup --help" for the subcommands.
package main

import (
	"os"

	"github.com/neardup/neardup/cmd/neardup/command"
)

func main() {
	os.Exit(command.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
