package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/redact"
)

func newMigrateCmd(e *env) *cobra.Command {
	var database string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database migrations (serve also applies them at start-up)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(e.configPath, e.environ)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("database") {
				cfg.Database = database
			}
			st, err := openStore(cmd.Context(), cfg)
			if err != nil {
				return fmt.Errorf("database %s: %w", redact.DSN(cfg.Database), err)
			}
			defer st.Close()
			if err := st.Migrate(cmd.Context()); err != nil {
				return fmt.Errorf("migrate %s: %w", redact.DSN(cfg.Database), err)
			}
			fmt.Fprintf(e.stdout, "%s is up to date\n", redact.DSN(cfg.Database))
			return nil
		},
	}
	cmd.Flags().StringVar(&database, "database", "herald.db", "SQLite file or postgres:// URL (config database, env HERALD_DATABASE_URL)")
	return cmd
}
