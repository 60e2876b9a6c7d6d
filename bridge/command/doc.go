// Package command is the exec bridge of a2abridge: an A2A agent that runs
// a command for each message it gets (`kind: exec` in the gateway's
// configuration). The
// message goes to the command's stdin, its stdout comes back as an
// artifact streamed while the command runs, and its exit status settles
// the task.
//
// In `a2abridge serve --config`:
//
//	agents:
//	  wordcount:
//	    kind: exec
//	    description: Counts the words of the message
//	    command: [wc, -w]        # argv; no shell unless you write one: [sh, -c, "…"]
//	    env: [PATH, LANG]        # the server's variables the command sees (nothing else)
//	    set_env: {LC_ALL: C}     # extra variables
//	    timeout: 30s             # default 60s; 0s: none
//	    kill_grace: 5s           # SIGTERM → SIGKILL; default 5s
//	    max_output: 1048576      # stdout bytes kept; default 64 MiB
//	    max_concurrency: 4       # commands run at once; more messages wait; default 4
//	    workdir: /srv/data       # default: the server's
//	    input: text              # or json
//
// As a library, the Agent is an ordinary server.Agent:
//
//	a, err := command.New(command.Config{Command: []string{"wc", "-w"}, Env: []string{"PATH"}})
//	if err != nil { … }
//	defer a.Close()
//	host.Add(server.NewHandler(eng, "wordcount", a, card, server.HandlerOptions{}))
//
// # Input
//
// With input "text" (the default) stdin receives the message's text parts
// joined by "\n", without a newline added at the end; file and data parts
// are skipped. With input "json" it receives the message as one A2A 1.0
// JSON Message object (A2A 1.0 §4.1.4, ProtoJSON names), then "\n":
//
//	{"messageId":"…","contextId":"…","taskId":"…","role":"ROLE_USER",
//	 "parts":[{"text":"hello"},
//	          {"data":{"k":1}},
//	          {"raw":"aGk=","mediaType":"text/plain","filename":"a.txt"},
//	          {"url":"https://example.com/f.pdf","mediaType":"application/pdf"}],
//	 "metadata":{…}}
//
// Each part holds exactly one of "text", "data" (any JSON value), "raw"
// (bytes in standard base64) or "url", and optionally "mediaType",
// "filename" and "metadata"; members that are empty are left out.
// stdin is closed once the input is written; a command that does not read
// it all is not an error.
//
// # Output
//
// stdout becomes the artifact with id and name "output", sent in chunks as
// the command writes (A2A 1.0 §4.2.2): the first chunk with append false,
// the next ones with append true, and lastChunk on the last, sent when
// stdout ends (it may hold an empty text part, and a command that writes
// nothing yields one empty text part). Reads that arrive while a chunk is
// being stored are joined, up to about 32 KiB a chunk. A chunk that is
// valid UTF-8 is a text part, and a character is never split between two
// chunks; a chunk that is not (binary output) is a raw part (1.0 "raw",
// 0.3 a file with bytes) with media type application/octet-stream. The
// parts' bytes, concatenated in order, are stdout exactly. The task
// (GetTask, a blocking SendMessage's result) holds consecutive text
// chunks as one text part, with no empty part for an empty last chunk:
// the server joins them as it folds the chunks; streams deliver each
// chunk. At most max_output bytes are kept: past them the command is
// stopped and the task failed.
//
// stderr goes to the Logger, one record per line ("exec: stderr", with the
// task id and the pid; lines cut at 4 KiB, at most 1000 lines logged per
// run); its last 20 lines are kept for the failure reason.
//
// # Outcome
//
//   - exit status 0: completed;
//   - another exit status: failed, "exit status N; stderr:\n<last lines>";
//   - killed by a signal it did not get from us: failed, "terminated by
//     signal N (name)" and the stderr lines;
//   - timeout: failed, "timed out after D; the command was stopped";
//   - more stdout than max_output: failed, naming max_output;
//   - a program that cannot be found or run, or a missing workdir: failed
//     with a reason naming it ("command not found: \"x\" (not in PATH)").
//
// The final status update carries "a2abridge/exit_code" in its metadata
// when the command exited by itself.
//
// # Processes
//
// The command runs in a process group of its own. To stop it (tasks/cancel,
// timeout, max_output, server shutdown, Close) the whole group gets
// SIGTERM, then SIGKILL after kill_grace. On Linux, the processes that
// descend from the command but left its group (setsid, setpgid) get the
// same signals, through pidfds: when the stop begins, the group gets
// SIGSTOP, so that none of its processes can leave it or fork meanwhile;
// those outside it are found by their parent links in /proc and stopped
// in turn; then all get SIGTERM and SIGCONT (their own descendants are
// looked for again at the SIGKILL). A process whose parent had already
// exited by then (a daemon that forked twice) was reparented away and is
// out of reach; on other
// systems a process that left the group is not signalled either: run
// such commands under a supervisor of their own (a container, a
// systemd unit). When the command exits, processes it left in its group
// are stopped the same way; one that left the group and keeps stdout or
// stderr open has them closed kill_grace + 2 s after the command's exit. The command is
// always waited for, so no zombie is left behind.
//
// A process group id can be reused once the group is empty, so the
// delayed SIGKILL is cancelled as soon as the group is found empty after
// the command was reaped, and goes out only while the group is still the
// run's: on Linux, while a process found in the group when the command
// exited (held by a pidfd) still runs in it; elsewhere, while the group
// has members and no process has the group's id.
//
// # Concurrency
//
// At most max_concurrency commands (default 4) run at once, for all the
// agent's tasks together. A message that arrives when they all run waits
// for one to end: its task is working, with the status message "Waiting
// for a free slot: max_concurrency (N) commands of this agent are
// running; …", until the command starts. The wait ends with tasks/cancel
// (the command never starts) or after timeout (the task fails: "timed out
// after D waiting for a free slot (max_concurrency N: …)"); timeout then
// bounds the run anew.
//
// # Environment
//
// The command's environment holds only the server's variables named in
// env (those that are set) and set_env: PATH, HOME, LANG and the rest are
// passed only when listed. A bare program name is looked up in the PATH of
// that environment, or in the server's when it has none; relative PATH
// entries are skipped.
//
// The package runs on Unix systems only; New returns an error elsewhere.
package command
