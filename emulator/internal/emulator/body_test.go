package emulator

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body              string
		want              string
		tooLarge, wantsOK bool
	}{
		{"hello", "hello", false, true},
		{"", "", false, true},
		{"hello, world", "", true, false},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		body, tooLarge, ok := ReadBody(w, httptest.NewRequest("POST", "/", strings.NewReader(tt.body)), 5)
		if string(body) != tt.want || tooLarge != tt.tooLarge || ok != tt.wantsOK {
			t.Errorf("ReadBody(%q) = %q, %v, %v; want %q, %v, %v", tt.body, body, tooLarge, ok, tt.want, tt.tooLarge, tt.wantsOK)
		}
	}
}
