package cli

import (
	"regexp"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Issue 32 item 3: help is written for the user: no requirement numbers
// (S3.7), seed or issue numbers in any command's text or flag.
func TestHelpSpeaksTheUsersLanguage(t *testing.T) {
	t.Parallel()
	internal := regexp.MustCompile(`\bS[0-9]\.[0-9]+|\b[Ss]eed 00[0-9]|\bseed's\b|\b[Ii]ssue [0-9]+`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, text := range []string{c.Short, c.Long, c.Example} {
			if m := internal.FindString(text); m != "" {
				t.Errorf("%q help says %q", c.CommandPath(), m)
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if m := internal.FindString(f.Usage); m != "" {
				t.Errorf("%q --%s says %q", c.CommandPath(), f.Name, m)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&env{}))
}
