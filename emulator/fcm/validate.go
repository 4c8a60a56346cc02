package fcm

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// The fields of each object of the FCM v1 request, by their proto names.
// Proto JSON also accepts the lowerCamelCase spelling; object maps it back.
const (
	fieldsRequest           = "validate_only message"
	fieldsMessage           = "name data notification android webpush apns fcm_options token topic condition"
	fieldsNotification      = "title body image"
	fieldsAndroid           = "collapse_key priority ttl restricted_package_name data notification fcm_options direct_boot_ok bandwidth_constrained_ok restricted_satellite_ok"
	fieldsAndroidFCMOptions = "analytics_label"
	fieldsAPNS              = "headers payload fcm_options live_activity_token"
	fieldsAPNSFCMOptions    = "analytics_label image"
	fieldsWebpush           = "headers data notification fcm_options"
	fieldsWebpushFCMOptions = "link analytics_label"
	fieldsFCMOptions        = "analytics_label"
)

// object decodes raw as a JSON object whose keys must be among fields,
// returning it keyed by proto (snake_case) name. path names the object in
// error messages ("" for the request itself).
func object(raw json.RawMessage, path, fields string) (map[string]json.RawMessage, *googleError) {
	in, ok := splitObject(raw)
	if !ok {
		if err := json.Unmarshal(raw, &in); err != nil {
			if path == "" {
				return nil, invalidPayload(err)
			}
			return nil, badRequest(path, "Invalid value at '"+path+"': expected a JSON object")
		}
	}
	for k, v := range in {
		name := snakeCase(k)
		if !hasField(fields, name) {
			at := ""
			if path != "" {
				at = " at '" + path + "'"
			}
			return nil, badRequest(path, `Invalid JSON payload received. Unknown name "`+k+`"`+at+": Cannot find field.")
		}
		if name != k {
			delete(in, k)
			in[name] = v
		}
	}
	return in, nil
}

// hasField reports whether name is one of the space-separated fields.
func hasField(fields, name string) bool {
	for f := range strings.FieldsSeq(fields) {
		if f == name {
			return true
		}
	}
	return false
}

// pick returns the field name of obj.
func pick(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	v, ok := obj[name]
	return v, ok
}

// invalidPayload is FCM's answer to a body that is not a JSON object.
func invalidPayload(err error) *googleError {
	return badRequest("", "Invalid JSON payload received. "+jsonProblem(err))
}

// jsonProblem describes a decoding error without quoting the input.
func jsonProblem(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return "Syntax error at byte " + strconv.FormatInt(se.Offset, 10) + "."
	}
	return "Expected a JSON object."
}

// snakeCase maps a lowerCamelCase proto JSON name to its proto name.
func snakeCase(k string) string {
	if strings.IndexFunc(k, unicode.IsUpper) < 0 {
		return k
	}
	var b strings.Builder
	for _, r := range k {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// stringMap decodes a map<string, string> field; nil raw is an empty map.
func stringMap(raw json.RawMessage, path string) (map[string]string, *googleError) {
	if raw == nil {
		return nil, nil
	}
	if members, ok := splitObject(raw); ok {
		m := make(map[string]string, len(members))
		for k, v := range members {
			if m[k], ok = jsonString(v); !ok {
				break
			}
		}
		if ok {
			return m, nil
		}
	}
	var m map[string]string
	if json.Unmarshal(raw, &m) == nil {
		return m, nil
	}
	// Find the offending entry for the message.
	var loose map[string]json.RawMessage
	if json.Unmarshal(raw, &loose) != nil {
		return nil, badRequest(path, "Invalid value at '"+path+"': expected a map of strings")
	}
	for k, v := range loose {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, badRequest(path, "Invalid value at '"+path+"["+k+"].value' (TYPE_STRING), "+string(v))
		}
	}
	return nil, badRequest(path, "Invalid value at '"+path+"': expected a map of strings")
}

// stringField decodes obj[name], if present, into dst.
func stringField(obj map[string]json.RawMessage, name, path string, dst *string) *googleError {
	raw, ok := obj[name]
	if !ok {
		return nil
	}
	if s, ok := jsonString(raw); ok {
		*dst = s
		return nil
	}
	if json.Unmarshal(raw, dst) != nil {
		return badRequest(path, "Invalid value at '"+path+"' (TYPE_STRING), "+string(raw))
	}
	return nil
}

// anyObject checks that obj[name], if present, is a JSON object (its
// content is free-form or not checked by the emulator).
func anyObject(obj map[string]json.RawMessage, name, path string) (map[string]json.RawMessage, *googleError) {
	raw, ok := obj[name]
	if !ok {
		return nil, nil
	}
	if m, ok := splitObject(raw); ok {
		return m, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, badRequest(path, "Invalid value at '"+path+"': expected a JSON object")
	}
	return m, nil
}

// lowerKeys returns headers keyed by lower-case name (HTTP header names are
// case-insensitive).
func lowerKeys(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}

func checkAndroid(raw json.RawMessage) *googleError {
	a, gerr := object(raw, "message.android", fieldsAndroid)
	if gerr != nil {
		return gerr
	}
	var s string
	for _, f := range []string{"collapse_key", "restricted_package_name"} {
		if gerr := stringField(a, f, "message.android."+f, &s); gerr != nil {
			return gerr
		}
	}
	if raw, ok := a["priority"]; ok {
		var p string
		_ = json.Unmarshal(raw, &p)
		switch p {
		case "high", "normal", "HIGH", "NORMAL":
		default:
			return badRequest("message.android.priority",
				"Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), "+string(raw))
		}
	}
	if raw, ok := a["ttl"]; ok {
		var ttl string
		secs, valid := -1.0, json.Unmarshal(raw, &ttl) == nil
		if valid {
			secs, valid = parseProtoDuration(ttl)
		}
		if !valid {
			return badRequest("message.android.ttl", "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "+string(raw))
		}
		if secs < 0 || secs > float64(maxTTL.Seconds()) {
			return invalidArgument("message.android.ttl", "TTL must be between 0 and 2419200 seconds (28 days)")
		}
	}
	if _, gerr := stringMap(a["data"], "message.android.data"); gerr != nil {
		return gerr
	}
	if _, gerr := anyObject(a, "notification", "message.android.notification"); gerr != nil {
		return gerr
	}
	if raw, ok := a["fcm_options"]; ok {
		if _, gerr := object(raw, "message.android.fcm_options", fieldsAndroidFCMOptions); gerr != nil {
			return gerr
		}
	}
	return nil
}

// parseProtoDuration parses google.protobuf.Duration's JSON form: seconds
// with up to nine fractional digits and an "s" suffix ("3600s", "1.5s").
func parseProtoDuration(s string) (float64, bool) {
	num, ok := strings.CutSuffix(s, "s")
	if !ok || num == "" {
		return 0, false
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(num, "-"), ".")
	if whole == "" || len(frac) > 9 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(num, 64)
	return v, err == nil
}

// apnsPushTypes are the apns-push-type values APNs knows.
const apnsPushTypes = " alert background location voip complication fileprovider mdm liveactivity pushtotalk widgets controls "

func checkAPNS(raw json.RawMessage) *googleError {
	a, gerr := object(raw, "message.apns", fieldsAPNS)
	if gerr != nil {
		return gerr
	}
	headers, gerr := stringMap(a["headers"], "message.apns.headers")
	if gerr != nil {
		return gerr
	}
	h := lowerKeys(headers)
	prio, hasPrio := h["apns-priority"]
	if hasPrio && prio != "1" && prio != "5" && prio != "10" {
		return invalidArgument("message.apns.headers", "Invalid APNs priority: apns-priority must be 1, 5 or 10, not \""+prio+"\"")
	}
	if pt, ok := h["apns-push-type"]; ok {
		if !strings.Contains(apnsPushTypes, " "+pt+" ") {
			return invalidArgument("message.apns.headers", "Invalid apns-push-type \""+pt+"\"")
		}
		if pt == "background" && prio == "10" {
			return invalidArgument("message.apns.headers", "A background notification (apns-push-type background) must have apns-priority 5")
		}
	}
	if exp, ok := h["apns-expiration"]; ok {
		if _, err := strconv.ParseUint(exp, 10, 64); err != nil {
			return invalidArgument("message.apns.headers", "apns-expiration must be a UNIX time in seconds, not \""+exp+"\"")
		}
	}
	if id, ok := h["apns-collapse-id"]; ok && len(id) > 64 {
		return invalidArgument("message.apns.headers", "apns-collapse-id must be at most 64 bytes")
	}
	payload, gerr := anyObject(a, "payload", "message.apns.payload")
	if gerr != nil {
		return gerr
	}
	if _, gerr := anyObject(payload, "aps", "message.apns.payload.aps"); gerr != nil {
		return gerr
	}
	if raw, ok := a["fcm_options"]; ok {
		if _, gerr := object(raw, "message.apns.fcm_options", fieldsAPNSFCMOptions); gerr != nil {
			return gerr
		}
	}
	var s string
	return stringField(a, "live_activity_token", "message.apns.live_activity_token", &s)
}

func checkWebpush(raw json.RawMessage) *googleError {
	wp, gerr := object(raw, "message.webpush", fieldsWebpush)
	if gerr != nil {
		return gerr
	}
	headers, gerr := stringMap(wp["headers"], "message.webpush.headers")
	if gerr != nil {
		return gerr
	}
	h := lowerKeys(headers)
	if ttl, ok := h["ttl"]; ok {
		if n, err := strconv.ParseUint(ttl, 10, 32); err != nil || n > uint64(maxTTL.Seconds()) {
			return invalidArgument("message.webpush.headers", "Invalid TTL header \""+ttl+"\": must be whole seconds, at most 2419200")
		}
	}
	if u, ok := h["urgency"]; ok {
		switch u {
		case "very-low", "low", "normal", "high":
		default:
			return invalidArgument("message.webpush.headers", "Invalid Urgency header \""+u+"\": must be very-low, low, normal or high")
		}
	}
	if _, gerr := stringMap(wp["data"], "message.webpush.data"); gerr != nil {
		return gerr
	}
	if _, gerr := anyObject(wp, "notification", "message.webpush.notification"); gerr != nil {
		return gerr
	}
	if raw, ok := wp["fcm_options"]; ok {
		if _, gerr := object(raw, "message.webpush.fcm_options", fieldsWebpushFCMOptions); gerr != nil {
			return gerr
		}
	}
	return nil
}
