package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
)

// The operator and setup commands reach a running Herald through its HTTP
// API, with the public Go client (heraldclient), like any other program:
// they see exactly what the API enforces. A body the user wrote as JSON
// (--file) is sent as written (sendFile), so the server's strict decoder
// names an unknown or bad field by its whole path.

func addServerFlag(cmd *cobra.Command, e *env, server *string) {
	def := lookupEnv(e.environ, "HERALD_SERVER")
	if def == "" {
		def = "http://127.0.0.1:8080"
	}
	cmd.Flags().StringVar(server, "server", def, "Herald server URL (env HERALD_SERVER)")
	cmd.Flags().String("api-key", lookupEnv(e.environ, "HERALD_API_KEY"), "server API key (env HERALD_API_KEY; not needed against serve --dev)")
}

// requestTimeout bounds each HTTP exchange of a command with the server.
const requestTimeout = 30 * time.Second

// newClient is the client of the server at base, with the command's
// --api-key.
func newClient(cmd *cobra.Command, base string) (*heraldclient.Client, error) {
	key, _ := cmd.Flags().GetString("api-key")
	c, err := heraldclient.New(base, heraldclient.WithAPIKey(key), heraldclient.WithUserAgent("herald-cli"),
		heraldclient.WithHTTPClient(&http.Client{Timeout: requestTimeout}))
	if err != nil {
		return nil, fmt.Errorf("--server %q: %w", base, err)
	}
	return c, nil
}

// errorText is err as the command line prints it: an error the server
// answered reads "code (HTTP status): message", with the field at fault
// when the message does not start with it, and the request id of a server
// failure (the server's log has it); a server that could not be reached
// reads as the HTTP exchange that failed ("Get …: connection refused").
func errorText(err error) string {
	s := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		s = strings.Replace(s, "heraldclient: "+ue.Error(), ue.Error(), 1)
	}
	var he *heraldclient.Error
	if errors.As(err, &he) {
		msg := he.Message
		if he.Field != "" && !strings.HasPrefix(msg, he.Field+":") {
			msg = he.Field + ": " + msg
		}
		text := fmt.Sprintf("%s (HTTP %d): %s", he.Code, he.StatusCode, msg)
		if he.StatusCode >= 500 && he.RequestID != "" {
			text += " [request " + he.RequestID + "]"
		}
		s = strings.Replace(s, he.Error(), text, 1)
	}
	return s
}

// sendFile calls an operation with a body the user wrote (--file), as
// written, through the client's Do — its credential, retries and errors —
// and decodes the answer into out. The server's strict decoder then names
// an unknown or bad field by its whole path ("types.promo.disabld"), which
// decoding the file into the client's typed input here could not.
func sendFile(ctx context.Context, c *heraldclient.Client, method, path string, header http.Header, body json.RawMessage, out any) error {
	_, err := c.Do(ctx, heraldclient.Request{Method: method, Path: path, Header: header, Body: body}, out)
	return err
}

// apiPath fills a path's %s verbs with ids, each escaped as one segment.
func apiPath(format string, ids ...string) string {
	esc := make([]any, len(ids))
	for i, id := range ids {
		esc[i] = url.PathEscape(id)
	}
	return fmt.Sprintf(format, esc...)
}
