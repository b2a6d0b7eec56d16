// Package archrules holds no code: its test guards the shape of the module
// (which package may import what), so `make check` fails when a dependency
// starts pointing the wrong way.
package archrules
