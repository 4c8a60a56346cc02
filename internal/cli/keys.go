package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/redact"
	"github.com/heraldhq/herald/store"
)

// newKeysCmd is `herald keys`: server API keys are managed against the
// database directly, not through the API — the API needs a key, so the
// first one cannot come from it.
func newKeysCmd(e *env) *cobra.Command {
	var database string
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke server API keys (directly in the database)",
		Long: `Server API keys authenticate backends and operators (Authorization: Bearer hk_…).
These commands open the configured database directly (--database, config database,
HERALD_DATABASE_URL), because the API itself needs a key. A key is shown once, at creation;
Herald keeps only its SHA-256.

Scopes: ` + strings.Join(scopeNames(), ", ") + ` (admin grants all).`,
	}
	cmd.PersistentFlags().StringVar(&database, "database", "herald.db", "SQLite file or postgres:// URL (config database, env HERALD_DATABASE_URL)")
	withKeys := func(c *cobra.Command, fn func(ctx context.Context, k *auth.Keys) error) error {
		cfg, err := loadConfig(e.configPath, e.environ)
		if err != nil {
			return err
		}
		if c.Flags().Changed("database") {
			cfg.Database = database
		}
		st, err := openStore(c.Context(), cfg)
		if err != nil {
			return fmt.Errorf("database %s: %w", redact.DSN(cfg.Database), err)
		}
		defer st.Close()
		if err := st.Migrate(c.Context()); err != nil {
			return fmt.Errorf("migrate %s: %w", redact.DSN(cfg.Database), err)
		}
		// The bootstrap key plays no part here: only database keys are
		// created, listed and revoked.
		k, err := auth.NewKeys(auth.KeysConfig{Store: store.APIKeys(st)})
		if err != nil {
			return err
		}
		return fn(c.Context(), k)
	}

	var name string
	var scopes []string
	create := &cobra.Command{
		Use:     "create",
		Short:   "Create a key and print it (once)",
		Example: "  herald keys create --name checkout-backend --scope notifications:write --scope users:write --scope devices:write",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			sc, err := auth.ParseScopes(scopes)
			if err != nil {
				return err
			}
			return withKeys(c, func(ctx context.Context, keys *auth.Keys) error {
				k, secret, err := keys.Create(ctx, name, sc)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "id:     %s\nname:   %s\nscopes: %s\nkey:    %s\n", printable(k.ID), printable(k.Name), joinScopes(k.Scopes), secret)
				fmt.Fprintln(e.stderr, "Store the key now: Herald keeps only its hash and cannot show it again.")
				return nil
			})
		},
	}
	create.Flags().StringVar(&name, "name", "", "what the key is for (required)")
	create.Flags().StringSliceVar(&scopes, "scope", nil, "scope to grant (repeatable, or comma-separated)")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("scope")

	list := &cobra.Command{
		Use:   "list",
		Short: "List keys (ids, names, scopes; never the keys)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withKeys(c, func(ctx context.Context, keys *auth.Keys) error {
				ks, err := keys.List(ctx)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED\tREVOKED")
				for _, k := range ks {
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable(k.ID), printable(k.Name), joinScopes(k.Scopes), k.CreatedAt.Format(time.RFC3339), revoked)
				}
				return tw.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke <id>",
		Short: "Revoke a key (every instance refuses it within auth.key_cache_ttl)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withKeys(c, func(ctx context.Context, keys *auth.Keys) error {
				if err := keys.Revoke(ctx, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "revoked %s\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

func scopeNames() []string {
	var out []string
	for _, s := range auth.AllScopes() {
		out = append(out, string(s))
	}
	return out
}

func joinScopes(sc []auth.Scope) string {
	parts := make([]string, len(sc))
	for i, s := range sc {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}
