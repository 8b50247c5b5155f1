// Command member-restore restores an etcd member's data directory from a snapshot exactly once, from an init
// container of the member's pod that runs the etcd image (so the restore uses the etcdutl of the member's
// own etcd version).
//
// Why a program: the etcd images have no shell, and `etcdutl snapshot restore` refuses a data directory
// that exists. An init container runs again whenever the pod's sandbox is recreated (a node reboot), long
// after etcd has written to the restored directory, so the restore must be skipped once it is done, and a
// restore interrupted half-way must never be mistaken for a finished one. member-restore therefore
// restores into a scratch directory and renames it into place only when etcdutl succeeded: the data
// directory exists if and only if a restore finished.
//
//	member-restore install DIR
//	    copies this binary to DIR/member-restore (a volume shared with the etcd-image init container)
//	member-restore restore --snapshot FILE --data-dir DIR -- ETCDUTL ARGS...
//	    if DIR exists: nothing to do. Otherwise runs ETCDUTL ARGS... --data-dir DIR.restoring, then renames
//	    DIR.restoring to DIR and deletes FILE.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The kubelet keeps at most 4096 bytes of a termination message.
const maxTerminationMessage = 4096

func main() {
	if len(os.Args) < 2 {
		fail("usage: member-restore install DIR | member-restore restore --snapshot FILE --data-dir DIR -- ETCDUTL ARGS...")
	}
	var err error
	switch os.Args[1] {
	case "install":
		if len(os.Args) != 3 {
			fail("usage: member-restore install DIR")
		}
		err = install(os.Args[2])
	case "restore":
		var msg string
		msg, err = restoreCommand(os.Args[2:], runCommand)
		if err == nil {
			fmt.Println(msg)
		}
	default:
		fail("member-restore: unknown command " + os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, message)
	if len(message) > maxTerminationMessage {
		message = message[len(message)-maxTerminationMessage:]
	}
	_ = os.WriteFile("/dev/termination-log", []byte(message), 0o644)
	os.Exit(1)
}

// install copies the running binary into dir, through a temporary name, so a half-copied binary never runs.
func install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := filepath.Join(dir, ".member-restore.tmp")
	dst, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "member-restore"))
}

// runner runs a command, returning its combined output (tests inject their own).
type runner func(name string, args []string) ([]byte, error)

func runCommand(name string, args []string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.MultiWriter(&out, os.Stdout)
	cmd.Stderr = io.MultiWriter(&out, os.Stderr)
	err := cmd.Run()
	return out.Bytes(), err
}

func restoreCommand(argv []string, run runner) (string, error) {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	snapshot := fs.String("snapshot", "", "the snapshot file")
	dataDir := fs.String("data-dir", "", "the member's data directory")
	if err := fs.Parse(argv); err != nil {
		return "", err
	}
	command := fs.Args()
	if *snapshot == "" || *dataDir == "" || len(command) == 0 {
		return "", errors.New("usage: member-restore restore --snapshot FILE --data-dir DIR -- ETCDUTL ARGS...")
	}
	return restore(*snapshot, *dataDir, command, run)
}

func restore(snapshot, dataDir string, command []string, run runner) (string, error) {
	if _, err := os.Stat(dataDir); err == nil {
		// Restored before (and etcd may have written since): never again. The snapshot is not needed.
		_ = os.Remove(snapshot)
		return fmt.Sprintf("%s exists: the member was restored before; nothing to do", dataDir), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if _, err := os.Stat(snapshot); err != nil {
		return "", fmt.Errorf("snapshot %s is missing: the fetch-snapshot init container should have downloaded it (%v)", snapshot, err)
	}
	scratch := dataDir + ".restoring"
	// Left by an interrupted attempt: etcdutl refuses a directory that exists.
	if err := os.RemoveAll(scratch); err != nil {
		return "", err
	}
	args := append(append([]string{}, command[1:]...), "--data-dir="+scratch)
	if out, err := run(command[0], args); err != nil {
		_ = os.RemoveAll(scratch)
		return "", fmt.Errorf("%s refused the snapshot: %v: %s", filepath.Base(command[0]), err, lastLines(string(out), 5))
	}
	if err := os.Rename(scratch, dataDir); err != nil {
		return "", err
	}
	if err := syncDir(filepath.Dir(dataDir)); err != nil {
		return "", err
	}
	_ = os.Remove(snapshot)
	return fmt.Sprintf("restored %s into %s", snapshot, dataDir), nil
}

// syncDir makes the rename durable before etcd starts on the directory.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
