-- Receipts (issue 35 item 1): what the app reports about a message
-- (delivered, opened, dismissed, clicked) and the inbox item's read-state
-- (read, archived) are attempt rows of outcome 'receipt' on the delivery's
-- timeline, the event their error_code. This index holds each event once
-- per delivery, so a repeated or racing receipt writes nothing
-- (store/rules/receipts.go: ON CONFLICT ... DO NOTHING). Partial: no other
-- attempt row is indexed, so the send path pays nothing for it.
CREATE UNIQUE INDEX delivery_attempts_receipt ON delivery_attempts (delivery_id, error_code) WHERE outcome = 'receipt';
