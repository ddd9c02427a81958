package command

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Version is the release of neardup, set at build time with
// -ldflags "-X github.com/neardup/neardup/cmd/neardup/command.Version=v1.2.3".
var Version = "devel"

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the neardup version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "neardup %s\n", Version)
			return err
		},
	}
}
