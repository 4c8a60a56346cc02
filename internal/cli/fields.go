package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
)

// field is one "name: value" line of a record printed for a person.
type field struct{ name, value string }

// printFields writes the fields that have a value, aligned.
func printFields(w io.Writer, fs []field) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range fs {
		if f.value != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", f.name, f.value)
		}
	}
	return tw.Flush()
}

// timeOrEmpty formats t for a table, "" when it is zero or nil.
func timeOrEmpty(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// parseKeyValues reads repeated key=value flags into a map; nil when
// there are none.
func parseKeyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q: use key=value", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

// parseTimeFlag reads an RFC 3339 time flag; "" is the zero time.
func parseTimeFlag(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: use an RFC 3339 time such as 2026-11-22T09:00:00+09:00", flag, v)
	}
	return t, nil
}

// bodyFromFile reads the request body from --file when it is given, and
// refuses it beside any of the flags that would build the same body: one
// source per request, so nothing the user typed is silently ignored. ok
// is false when there is no --file and the flags build the body.
func bodyFromFile(cmd *cobra.Command, file string, bodyFlags ...string) (body json.RawMessage, ok bool, err error) {
	if file == "" {
		return nil, false, nil
	}
	for _, name := range bodyFlags {
		if cmd.Flags().Changed(name) {
			return nil, false, fmt.Errorf("give --file or --%s, not both", name)
		}
	}
	body, err = readJSONFile(cmd, file)
	return body, err == nil, err
}

// readJSONFile reads one JSON document from path ("-": standard input),
// refusing an empty input and anything after the document.
func readJSONFile(cmd *cobra.Command, path string) (json.RawMessage, error) {
	r := cmd.InOrStdin()
	name := "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, path
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(raw) > maxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var body json.RawMessage
	if err := dec.Decode(&body); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is empty; it should hold a JSON object", name)
		}
		return nil, fmt.Errorf("%s: not valid JSON: %w", name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: more than one JSON document; give one", name)
	}
	return body, nil
}

// maxFileBytes bounds a JSON body read from a file: the server's default
// body limit (max_body_bytes).
const maxFileBytes = 1 << 20

// addFileFlag adds --file/-f for a JSON body.
func addFileFlag(cmd *cobra.Command, file *string, what string) {
	cmd.Flags().StringVarP(file, "file", "f", "", what+" as JSON, from a file (- for standard input)")
}

// addJSONFlag adds --json, which prints the server's answer as JSON.
func addJSONFlag(cmd *cobra.Command, asJSON *bool) {
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
}

// newGetJSONCmd is a "get ID" command printing one resource of a running
// server as JSON, read by get (a heraldclient method expression such as
// (*heraldclient.Client).GetRule).
func newGetJSONCmd[T any](e *env, use, short string, get func(*heraldclient.Client, context.Context, string) (T, error)) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			v, err := get(c, cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printJSON(e.stdout, v)
		},
	}
	addServerFlag(cmd, e, &server)
	return cmd
}

// addPageFlags adds a list command's --cursor, --limit and --json.
func addPageFlags(cmd *cobra.Command, cursor *string, limit *int, asJSON *bool) {
	cmd.Flags().StringVar(cursor, "cursor", "", "continue after a previous page")
	cmd.Flags().IntVar(limit, "limit", 50, "page size (max 200)")
	addJSONFlag(cmd, asJSON)
}

// printJSON prints v as indented JSON, every non-printable character
// escaped.
func printJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return escapeJSON(w, buf.Bytes())
}

// printMore says how to read the next page of a listing, when there is one.
func printMore(w io.Writer, next string) {
	if next != "" {
		fmt.Fprintf(w, "\nmore: --cursor %s\n", next)
	}
}
