// Package rules holds the product rules both stores apply, each written
// once: which deliveries a trigger makes (channel routing, which devices
// qualify for push, the sms / email address and its skip reasons, the
// in-app inbox write; store/channels.go states them), a notification's
// status, summed up from its deliveries (StatusRules, status.go), and the
// reminder rows' writes and event stop (reminders.go, issue 19).
// Neither store decides these questions in SQL of its own any more, so
// the two cannot drift (issue 17).
//
// A rule that needs no database facts is decided in Go (Plan: which
// channels of which notification get deliveries, to which provider, due
// when). A rule that needs facts only the database has at write time —
// the user's devices, phone, e-mail address, suppressions, the
// deliveries' states — is a SQL fragment the stores embed in the
// set-based statements they already run: deciding it in Go would first
// read those facts, a round trip per trigger that PostgreSQL's pipelined
// enqueue (one round trip for a whole group commit) cannot afford. The
// stores fetch the facts and persist the outcome; the fragments decide.
//
// The fragments are plain SQL that SQLite and PostgreSQL both accept
// (FILTER clauses, TRUE, CAST, ||). The dialect differences that remain
// are in named spots of the stores: how the trigger's rows reach the
// statement (a VALUES list in SQLite, unnest of arrays in PostgreSQL),
// the parameter markers (passed to the fragments that need them), and
// the schema prefix Schema.
package rules

import "strings"

// Schema is the placeholder the shared statements put before a table
// name: PostgreSQL replaces it with its schema ("herald."), SQLite with
// nothing (Unqualified).
const Schema = "{s}."

// Unqualified is query without the schema placeholder: the tables of
// the one SQLite database.
func Unqualified(query string) string { return strings.ReplaceAll(query, Schema, "") }
