// Package gatewayclient is the Go client of the gateway API, generated from
// docs/openapi.yaml by oapi-codegen: the project consumes its own contract
// the way gateways do (the load test and the soak speak through it), and
// `make check` fails when it is stale.
package gatewayclient

//go:generate go tool oapi-codegen -generate types,client -package gatewayclient -o client.gen.go ../../docs/openapi.yaml
