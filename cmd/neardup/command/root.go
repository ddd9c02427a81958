// Package command implements the neardup command line: one file per
// subcommand, each with its own test. main only calls Main.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Main runs the command line with args (without the program name) and returns
// the process exit code: 0 on success, 1 on failure, 2 on a usage error.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	root := NewRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "neardup: %v\n", err)
		var u usageError
		// Cobra reports an unknown subcommand with a plain error; it is a
		// usage error like an unknown flag.
		if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command ") {
			return 2
		}
		return 1
	}
	return 0
}

// NewRoot returns the root command with every subcommand attached. Tests call
// it to run subcommands in process.
func NewRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "neardup",
		Short:         "Find near-duplicate text with SimHash fingerprints",
		Long:          "neardup fingerprints text with SimHash (Charikar; Manku, Jain, Das Sarma 2007), compares\nfingerprints, indexes them by Hamming distance and removes near-duplicates from corpora.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	// One line per subcommand; each constructor lives in its own file.
	root.AddCommand(
		newVersionCommand(),
		newFingerprintCommand(),
		newCompareCommand(),
		newIDFCommand(),
		newEvalCommand(),
		newIndexCommand(),
		newPairsCommand(),
		newClustersCommand(),
		newDedupCommand(),
		newServeCommand(),
		newImportCommand(),
	)
	return root
}

// usageError marks an error in how the command was called (unknown flag, bad
// argument): the exit code is 2 rather than 1.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }
