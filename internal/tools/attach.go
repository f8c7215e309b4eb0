package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Files the model attaches by path (a2a_call's files[].path) are read only
// from the attachment roots the operator configured (attachment_roots):
// a prompt-injected turn must not be able to send ~/.ssh/id_rsa to a peer.
// A path resolves after symlinks; it must lie inside a root; and the file
// is opened through an os.Root of that root (openat with the root as the
// anchor), which refuses any component — a symlink swapped in after the
// check included — that would leave it. Only regular files are read (a
// FIFO or a device is refused, never waited on).

// attachments are the roots the model may attach files from
// (Config.AttachmentRoots), opened once: a2a_call's files argument reads
// through them (filePart).
type attachments struct {
	roots []attachmentRoot
}

// attachmentRoot is one configured root, resolved.
type attachmentRoot struct {
	dir  string // absolute, symlinks resolved
	root *os.Root
}

// openRoots checks and opens the configured roots: each must be an
// absolute path to an existing directory.
func openRoots(dirs []string) ([]attachmentRoot, error) {
	var out []attachmentRoot
	fail := func(err error) ([]attachmentRoot, error) {
		closeRoots(out)
		return nil, err
	}
	for _, d := range dirs {
		d = strings.TrimSpace(d)
		if !filepath.IsAbs(d) {
			return fail(fmt.Errorf("attachment_roots (A2A_ATTACHMENT_ROOTS): %q is not an absolute path; give the directories the model may attach files from as absolute paths", d))
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return fail(fmt.Errorf("attachment_roots (A2A_ATTACHMENT_ROOTS): %q cannot be used: %w", d, err))
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return fail(fmt.Errorf("attachment_roots (A2A_ATTACHMENT_ROOTS): %q is not a directory", d))
		}
		r, err := os.OpenRoot(real)
		if err != nil {
			return fail(fmt.Errorf("attachment_roots (A2A_ATTACHMENT_ROOTS): %q cannot be opened: %w", d, err))
		}
		out = append(out, attachmentRoot{dir: real, root: r})
	}
	return out, nil
}

func closeRoots(roots []attachmentRoot) {
	for _, r := range roots {
		_ = r.root.Close()
	}
}

// rootNames lists the roots for messages.
func (a *attachments) rootNames() string {
	names := make([]string, len(a.roots))
	for i, r := range a.roots {
		names[i] = r.dir
	}
	return strings.Join(names, ", ")
}

// readAttachment reads the file at path, which must lie inside an
// attachment root, returning its content and base name. The errors are
// ready for an is_error result.
func (a *attachments) readAttachment(path string) ([]byte, string, error) {
	if len(a.roots) == 0 {
		return nil, "", errors.New(`"path" is refused: no attachment roots are configured, so the model may not attach local files; ` +
			`the operator lists the directories files may be attached from in attachment_roots (A2A_ATTACHMENT_ROOTS). Send the content as "base64" or a "url" instead`)
	}
	root, rel, err := a.locate(path)
	if err != nil {
		return nil, "", err
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	fh, err := root.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", fmt.Errorf("path: cannot read %q inside the attachment root %s: %v", path, root.dir, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("path: cannot read %q: %v", path, err)
	}
	switch {
	case st.IsDir():
		return nil, "", fmt.Errorf("path: %q is a directory; attach files one by one", path)
	case !st.Mode().IsRegular():
		return nil, "", fmt.Errorf("path: %q is not a regular file (%s); only regular files can be attached", path, st.Mode().Type())
	case st.Size() > MaxFileBytes:
		return nil, "", fmt.Errorf("path: %q is %d bytes; the limit is %d (send a url instead)", path, st.Size(), MaxFileBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("path: cannot read %q: %v", path, err)
	}
	if len(raw) > MaxFileBytes {
		return nil, "", fmt.Errorf("path: %q is larger than the limit of %d bytes", path, MaxFileBytes)
	}
	return raw, filepath.Base(rel), nil
}

// locate finds the root a path lies in, after symlinks, and the path
// relative to it. A relative path is looked up in each root in turn.
func (a *attachments) locate(path string) (attachmentRoot, string, error) {
	outside := fmt.Errorf(`path: %q is outside the attachment roots (%s); the model may attach only files under attachment_roots (A2A_ATTACHMENT_ROOTS)`, path, a.rootNames())
	var candidates []string
	if filepath.IsAbs(path) {
		candidates = []string{path}
	} else {
		for _, r := range a.roots {
			candidates = append(candidates, filepath.Join(r.dir, path))
		}
	}
	var firstErr error
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("path: cannot read %q: %v", path, err)
			}
			continue
		}
		for _, r := range a.roots {
			rel, err := filepath.Rel(r.dir, real)
			if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return r, rel, nil
			}
		}
	}
	if firstErr != nil && !filepath.IsAbs(path) {
		return attachmentRoot{}, "", firstErr
	}
	if firstErr != nil {
		// A path that does not resolve is reported as what it is only
		// when it would lie inside a root; otherwise as outside.
		for _, r := range a.roots {
			if rel, err := filepath.Rel(r.dir, filepath.Clean(path)); err == nil && !strings.HasPrefix(rel, "..") {
				return attachmentRoot{}, "", firstErr
			}
		}
	}
	return attachmentRoot{}, "", outside
}
