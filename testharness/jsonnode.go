package testharness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// jsonToNode parses JSON into a yaml.Node tree with line numbers, so JSON
// and YAML scenario files go through one decoder and report errors alike.
// (YAML parsers reject some valid JSON, e.g. tab indentation, so JSON is
// not simply handed to the YAML parser.)
func jsonToNode(data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	pos := func(off int64) (line, col int) {
		i := int(off)
		for i < len(data) && strings.IndexByte(" \t\r\n,:", data[i]) >= 0 {
			i++
		}
		line = 1 + bytes.Count(data[:i], []byte("\n"))
		col = i - bytes.LastIndexByte(data[:i], '\n')
		return line, col
	}
	wrap := func(err error) error {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, _ := pos(syn.Offset - 1)
			return fmt.Errorf("line %d: invalid JSON: %w", line, err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("invalid JSON: unexpected end of input")
		}
		return fmt.Errorf("invalid JSON: %w", err)
	}
	var parse func() (*yaml.Node, error)
	parse = func() (*yaml.Node, error) {
		line, col := pos(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, wrap(err)
		}
		n := &yaml.Node{Line: line, Column: col}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				n.Kind, n.Tag = yaml.MappingNode, "!!map"
				for dec.More() {
					kl, kc := pos(dec.InputOffset())
					ktok, err := dec.Token()
					if err != nil {
						return nil, wrap(err)
					}
					key, _ := ktok.(string)
					val, err := parse()
					if err != nil {
						return nil, err
					}
					n.Content = append(n.Content,
						&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: kl, Column: kc}, val)
				}
			case '[':
				n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
				for dec.More() {
					val, err := parse()
					if err != nil {
						return nil, err
					}
					n.Content = append(n.Content, val)
				}
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return nil, wrap(err)
			}
		case string:
			n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", t
		case json.Number:
			n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!int", t.String()
			if strings.ContainsAny(t.String(), ".eE") {
				n.Tag = "!!float"
			}
		case bool:
			n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!bool", fmt.Sprint(t)
		case nil:
			n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!null", "null"
		}
		return n, nil
	}
	root, err := parse()
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		line, _ := pos(dec.InputOffset())
		return nil, fmt.Errorf("line %d: invalid JSON: data after the top-level value", line)
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}, Line: 1, Column: 1}, nil
}

// JSONValue decodes a YAML node into the value encoding/json would decode
// from the same document (maps with string keys, slices, scalars), so that
// YAML configuration and scenarios become JSON one way: the scenario
// parser's values and cmd/agenthost's plugin sections.
func JSONValue(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return jsonValue(v)
}

func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %v is not a string", k)
			}
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		for i, e := range x {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
		return x, nil
	}
	return v, nil
}
