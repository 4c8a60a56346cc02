package kafkaapi

import (
	"errors"
	"regexp"
	"strings"
)

// avroWords rewrites hamba/avro's errors into a producer's words: its
// reader names Go functions and types ("map[string]interface {}: avro:
// ReadSTRING: invalid string length"), which say nothing to whoever reads
// a dead letter (issue 30 item 2). Field names (the schema's) are kept.
var avroWords = []struct {
	re   *regexp.Regexp
	text string
}{
	{regexp.MustCompile(`Read(?:STRING|String|BYTES|Bytes): invalid (\w+) length`), "a ${1} has an invalid length"},
	{regexp.MustCompile("Read(?:STRING|String|BYTES|Bytes): size is greater than `Config.MaxByteSliceSize`"), "a string or bytes value is longer than Herald reads"},
	{regexp.MustCompile("decode array: size is greater than `Config.MaxSliceAllocSize`"), "an array is longer than Herald reads"},
	{regexp.MustCompile(`Read(?:Int|Long): int overflow`), "an integer is longer than 64 bits"},
	{regexp.MustCompile(`ReadBool: invalid bool`), "a boolean is neither 0 nor 1"},
	{regexp.MustCompile(`(?:Read|decode union type): unknown union type`), "a union's branch is not in the schema"},
	{regexp.MustCompile(`(?:Read|decode enum symbol): unknown enum symbol`), "an enum symbol is not in the schema"},
	// What is left of Go: type names before a colon, and the library's
	// own "avro: " prefixes (the caller says "avro" once).
	{regexp.MustCompile(`(?:map\[[^\]]*\](?:interface \{\}|[\w.*]+)|\[\][\w.*]+|\*?[A-Za-z_]\w*\.[A-Z]\w*): `), ""},
	{regexp.MustCompile(`avro: `), ""},
}

// avroError is err from hamba/avro in a producer's words.
func avroError(err error) error {
	s := err.Error()
	for _, w := range avroWords {
		s = w.re.ReplaceAllString(s, w.text)
	}
	return errors.New(strings.TrimSpace(s))
}
