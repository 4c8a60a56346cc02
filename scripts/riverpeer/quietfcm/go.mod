module riverpeer/quietfcm

go 1.26.0

require github.com/heraldhq/herald v0.0.0

require github.com/golang-jwt/jwt/v5 v5.3.1 // indirect

replace github.com/heraldhq/herald => ../../..
