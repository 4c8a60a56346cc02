package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 35 item 4: a receipt the app posts is reported to an endpoint
// subscribed to receipt.recorded — once: the same receipt again is a
// duplicate and reports nothing — with the message id the app sent.
func TestReceiptPostWritesReceiptRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	var hook heraldtype.WebhookEndpointSecret
	e.do("POST", "/v1/webhooks", map[string]any{"url": "https://example.com/hook",
		"events": []string{heraldtype.WebhookReceiptRecorded}}).expect(t, http.StatusCreated, &hook)
	messageID, deliveryID := e.messageID("alice")
	token := userToken(t, "alice")
	receipt := map[string]any{"message_id": messageID, "event": "opened"}

	wantReceipts(t, e.receipts(token, receipt), 1, 0, 0, heraldtype.ReceiptRecorded)
	wantReceipts(t, e.receipts(token, receipt), 0, 1, 0, heraldtype.ReceiptDuplicate)

	var page heraldtype.WebhookMessagePage
	e.do("GET", "/v1/webhooks/"+hook.ID+"/messages", nil).expect(t, http.StatusOK, &page)
	if len(page.Messages) != 1 {
		t.Fatalf("messages %+v, want one receipt.recorded", page.Messages)
	}
	m := page.Messages[0]
	if m.Type != heraldtype.WebhookReceiptRecorded || m.EventID != fmt.Sprintf("evt_r%d_opened", deliveryID) {
		t.Fatalf("message %+v", m)
	}
	var data struct {
		MessageID string `json:"message_id"`
		Event     string `json:"event"`
		UserID    string `json:"user_id"`
	}
	if err := json.Unmarshal(m.Data, &data); err != nil || data.MessageID != messageID || data.Event != "opened" ||
		data.UserID != "alice" {
		t.Fatalf("data %s (%v)", m.Data, err)
	}
}
