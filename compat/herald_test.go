package compat

import "github.com/heraldhq/herald/heraldtype"

func heraldMessage(token string) *heraldtype.Message {
	return &heraldtype.Message{
		Key:          "n1.1",
		Notification: &heraldtype.Notification{ID: "n1", Title: "t", Body: "b", Priority: heraldtype.PriorityHigh, PayloadMode: heraldtype.PayloadAlert},
		Device:       &heraldtype.Device{ID: "d", Platform: heraldtype.PlatformAndroid, Token: token},
	}
}
