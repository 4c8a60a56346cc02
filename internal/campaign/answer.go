package campaign

import (
	"encoding/json"
	"io"

	"github.com/heraldhq/herald/internal/callout"
)

// DecodeFetchAnswer reads a fetch answer ({"users": {"<id>": {"items":
// […], "fields": {…}}}}) as a stream of tokens into bounded values (issue
// 31 item 3): the content of the users in asked is kept, everything else
// is skipped, and every value read counts against lim.MaxValues; a user
// with more than lim.MaxItems items or lim.MaxFields fields is a refusal
// of the whole answer naming the bound. Keys it does not know are
// skipped, as json.Unmarshal would; null stands for an empty object or
// list.
func DecodeFetchAnswer(r io.Reader, lim FetchLimits, asked map[string]bool) (map[string]UserContent, error) {
	lim = lim.withDefaults()
	dec := json.NewDecoder(r)
	b := callout.NewBudget(lim.MaxValues, "campaigns.fetch_max_values")
	out := map[string]UserContent{}
	ok, err := b.Open(dec, '{', "")
	if err != nil || !ok {
		if err == nil {
			err = callout.Badf("is null, not an object")
		}
		return nil, err
	}
	for dec.More() {
		k, err := b.Key(dec)
		if err != nil {
			return nil, err
		}
		if k != "users" {
			if err := b.Skip(dec); err != nil {
				return nil, err
			}
			continue
		}
		if err := decodeUsers(dec, b, lim, asked, out); err != nil {
			return nil, err
		}
	}
	if err := b.Close(dec); err != nil {
		return nil, err
	}
	return out, callout.End(dec)
}

func decodeUsers(dec *json.Decoder, b *callout.Budget, lim FetchLimits, asked map[string]bool, out map[string]UserContent) error {
	ok, err := b.Open(dec, '{', "users")
	if err != nil || !ok {
		return err
	}
	for dec.More() {
		id, err := b.Key(dec)
		if err != nil {
			return err
		}
		if !asked[id] {
			if err := b.Skip(dec); err != nil {
				return err
			}
			continue
		}
		uc, err := decodeUser(dec, b, lim, id)
		if err != nil {
			return err
		}
		out[id] = uc
	}
	return b.Close(dec)
}

func decodeUser(dec *json.Decoder, b *callout.Budget, lim FetchLimits, id string) (UserContent, error) {
	var uc UserContent
	ok, err := b.Open(dec, '{', "a user's content")
	if err != nil || !ok {
		return uc, err
	}
	for dec.More() {
		k, err := b.Key(dec)
		if err != nil {
			return uc, err
		}
		switch k {
		case "items":
			uc.Items, err = decodeItems(dec, b, lim.MaxItems, id)
		case "fields":
			uc.Fields, err = decodeFields(dec, b, lim.MaxFields, id)
		default:
			err = b.Skip(dec)
		}
		if err != nil {
			return uc, err
		}
	}
	return uc, b.Close(dec)
}

func decodeItems(dec *json.Decoder, b *callout.Budget, max int, id string) ([]any, error) {
	ok, err := b.Open(dec, '[', "items")
	if err != nil || !ok {
		return nil, err
	}
	items := []any{}
	for dec.More() {
		if len(items) == max {
			return nil, callout.Badf("has more than %d items for user %q (campaigns.fetch_max_items)", max, id)
		}
		v, err := b.Value(dec)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return items, b.Close(dec)
}

func decodeFields(dec *json.Decoder, b *callout.Budget, max int, id string) (map[string]any, error) {
	ok, err := b.Open(dec, '{', "fields")
	if err != nil || !ok {
		return nil, err
	}
	fields := map[string]any{}
	for dec.More() {
		if len(fields) == max {
			return nil, callout.Badf("has more than %d fields for user %q (campaigns.fetch_max_fields)", max, id)
		}
		k, err := b.Key(dec)
		if err != nil {
			return nil, err
		}
		if fields[k], err = b.Value(dec); err != nil {
			return nil, err
		}
	}
	return fields, b.Close(dec)
}
