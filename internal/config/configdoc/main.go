// Command configdoc writes docs/configuration.md, the configuration
// reference, from the settings internal/config declares (config.Settings:
// each field of config.Config with its JSON key, environment variable,
// default and help text) and the prose of configuration.md.tmpl around
// them. `make docs` runs it; its test fails when the committed file differs
// from what it would write, so the reference cannot drift from the code.
//
//	go run ./internal/config/configdoc -o docs/configuration.md
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

//go:embed configuration.md.tmpl
var page string

func main() {
	out := flag.String("o", "docs/configuration.md", "the file to write (- for standard output)")
	flag.Parse()
	doc, err := render(config.Settings())
	if err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
	if *out == "-" {
		_, err = os.Stdout.Write(doc)
	} else {
		err = os.WriteFile(*out, doc, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "configdoc: %v (run it from the repository's root, as make docs does)\n", err)
		os.Exit(1)
	}
}

// render fills the page's template with the table of settings.
func render(settings []config.Setting) ([]byte, error) {
	tmpl, err := template.New("configuration.md.tmpl").Parse(page)
	if err != nil {
		return nil, fmt.Errorf("parse configuration.md.tmpl: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, struct{ Table string }{table(settings)}); err != nil {
		return nil, fmt.Errorf("fill configuration.md.tmpl: %w", err)
	}
	return buf.Bytes(), nil
}

// table is the Markdown table of every setting, in declaration order.
func table(settings []config.Setting) string {
	var b strings.Builder
	b.WriteString("| setting | environment | default | meaning |\n|---|---|---|---|\n")
	for _, s := range settings {
		meaning := s.Help
		if s.Secret {
			meaning += " Secret: keep it in the environment or a file only its owner reads."
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(s.Key), code(s.Env), code(s.Default), cell(meaning))
	}
	return b.String()
}

// code is a table cell holding v as code, or a dash when v is empty.
func code(v string) string {
	if v == "" {
		return "—"
	}
	return "`" + cell(v) + "`"
}

// cell escapes what would end a Markdown table cell or line.
func cell(v string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(v)
}
