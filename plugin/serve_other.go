//go:build !unix

package plugin

func ignoreSIGPIPE() {}
