package emulator

import "time"

// Defaults fills in the settings every emulator's Config has when they
// are left at zero: the bound of recorded messages (def if maxRecorded is
// not positive) and the clock (time.Now if now is nil).
func Defaults(maxRecorded, def int, now func() time.Time) (int, func() time.Time) {
	if maxRecorded <= 0 {
		maxRecorded = def
	}
	if now == nil {
		now = time.Now
	}
	return maxRecorded, now
}
