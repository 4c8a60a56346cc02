// Command quietfcm serves Herald's FCM emulator (github.com/heraldhq/herald/
// emulator/fcm, built from a local checkout through a replace directive) as
// `herald bench` runs it in process: no per-message log line and one
// recorded message (MaxRecorded 1). `herald emulate fcm` logs every accepted
// message as JSON and keeps the last 100,000, which costs the emulator CPU
// that Herald's own bench does not pay; this lets the peer be measured
// either way.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18931", "listen address")
	project := flag.String("project", "riverpeer", "project id of the service account")
	credsOut := flag.String("credentials-out", "", "write the service-account JSON here")
	flag.Parse()
	em := fcmemu.New(fcmemu.Config{MaxRecorded: 1})
	if _, err := em.Start(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "quietfcm:", err)
		os.Exit(1)
	}
	defer em.Close()
	if err := os.WriteFile(*credsOut, em.ServiceAccountJSON(*project), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "quietfcm:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
