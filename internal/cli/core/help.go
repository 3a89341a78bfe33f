// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package core

import (
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Help is a plugin's help pages: one Markdown file a command, NAME.md for
// the command NAME ("root.md" for the plugin itself, "suspend.md" for
// `kubectl stask suspend`). A page is the command's reference as a reader
// of the repository sees it and what --help prints, in one shape:
//
//	# kubectl stask get NAME
//
//	The short description, one paragraph.
//
//	The long description, any number of paragraphs, printed as written.
//
//	## Examples
//
//	```
//	  kubectl stask get data-check
//	```
//
// The title is the command line: "kubectl", the plugin, then the command's
// usage (none for the plugin itself). The long description and the
// examples may be left out.
type Help struct {
	// Pages holds the NAME.md files in the folder Dir, an embed.FS of the
	// plugin's help folder.
	Pages fs.FS
	Dir   string
}

// Command returns a command whose Use, Short, Long and Example are the
// page name's. A missing or malformed page is a fault of the plugin's
// build, not of its use, and panics with what is wrong: every command is
// made when the root is, so the plugin's tests meet it first.
func (h Help) Command(name string) *cobra.Command {
	cmd, err := h.parse(name)
	if err != nil {
		panic(fmt.Sprintf("help page %s.md: %v", name, err))
	}
	return cmd
}

// parse reads the page name into a command (see Help for the shape).
func (h Help) parse(name string) (*cobra.Command, error) {
	text, err := h.read(name)
	if err != nil {
		return nil, err
	}
	title, body, _ := strings.Cut(text, "\n")
	words := strings.Fields(strings.TrimPrefix(title, "# "))
	if !strings.HasPrefix(title, "# ") || len(words) < 2 || words[0] != "kubectl" {
		return nil, fmt.Errorf("the first line is %q, want a title \"# kubectl PLUGIN [USAGE]\"", title)
	}
	cmd := &cobra.Command{Use: "kubectl-" + words[1]}
	if len(words) > 2 {
		cmd.Use = strings.Join(words[2:], " ")
	}
	body, examples, hasExamples := strings.Cut(body, "\n## Examples\n")
	if hasExamples {
		code, ok := fenced(examples)
		if !ok {
			return nil, fmt.Errorf("## Examples holds no ``` code block")
		}
		cmd.Example = code
	}
	short, long, _ := strings.Cut(strings.TrimSpace(body), "\n\n")
	if short == "" {
		return nil, fmt.Errorf("no short description under the title")
	}
	cmd.Short = strings.Join(strings.Fields(short), " ")
	cmd.Long = strings.TrimSpace(long)
	return cmd, nil
}

// read is the text of the page name, with Unix line ends.
func (h Help) read(name string) (string, error) {
	b, err := fs.ReadFile(h.Pages, path.Join(h.Dir, name+".md"))
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
}

// fenced returns what the first ``` code block of s holds, without its
// last newline.
func fenced(s string) (string, bool) {
	_, rest, ok := strings.Cut(s, "```\n")
	if !ok {
		return "", false
	}
	code, _, ok := strings.Cut(rest, "```")
	return strings.TrimSuffix(code, "\n"), ok
}

// Set gives cmd the help of the page name (see Command) and returns it,
// for a command whose other fields (Args, RunE) are written where it is
// made.
func (h Help) Set(name string, cmd *cobra.Command) *cobra.Command {
	page := h.Command(name)
	cmd.Use, cmd.Short, cmd.Long, cmd.Example = page.Use, page.Short, page.Long, page.Example
	return cmd
}

// Columns are the columns of a kind's table as the page name documents
// them, in a Markdown table under "## Columns" with the columns Column,
// Type (string when empty), Wide ("yes" for the columns only -o wide
// shows) and Description: the reader of --help learns what each column
// says from the table the command prints it with. The first column is the
// object's name. A page without such a table panics, as Command does.
func (h Help) Columns(name string) []metav1.TableColumnDefinition {
	cols, err := h.columns(name)
	if err != nil {
		panic(fmt.Sprintf("help page %s.md: %v", name, err))
	}
	return cols
}

// columns reads the "## Columns" table of the page name.
func (h Help) columns(name string) ([]metav1.TableColumnDefinition, error) {
	text, err := h.read(name)
	if err != nil {
		return nil, err
	}
	_, section, ok := strings.Cut(text, "\n## Columns\n")
	if !ok {
		return nil, fmt.Errorf("no ## Columns section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	lines := strings.Split(strings.TrimSpace(section), "\n")
	cols := make([]metav1.TableColumnDefinition, 0, len(lines))
	for _, line := range lines {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case len(cells) != 4:
			return nil, fmt.Errorf("the columns' row %q has %d cells, want 4: Column, Type, Wide, Description", line, len(cells))
		case cells[0] == "Column" || strings.Trim(cells[0], "-: ") == "":
			continue // the header and its rule
		}
		col := metav1.TableColumnDefinition{Name: cells[0], Type: cmp.Or(cells[1], "string"), Description: cells[3]}
		if cells[2] == "yes" {
			col.Priority = 1
		}
		if len(cols) == 0 {
			col.Format = "name"
		}
		cols = append(cols, col)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("the ## Columns table has no rows")
	}
	return cols, nil
}
