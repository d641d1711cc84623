/* termhost/ssh/sessions.h: persistent terminal sessions, offered by the SSH plugin
 * (org.termhost.ssh). Added in ABI 1.5.
 *
 * A persistent session is an interactive shell on a PTY that lives in the SSH feature of a
 * long-lived host (the daemon, `termhost daemon`), not in the terminal that opened it. Clients
 * attach a sink to see it and detach without ending it; any number may be attached at once
 * (mirrors: each sees the same output, any may type, the latest resize wins). The session keeps
 * its last output in a ring buffer (org.termhost.ssh's setting sessionRingBytes, 64 KiB to
 * 64 MiB, default 1 MiB): attach first replays the ring, prefixed with a soft reset ESC [ 0 m, then streams live
 * output with no gap and no byte twice. A lost connection is reconnected (after 1, 2, 5, 10,
 * then every 30 s; back to 1 s once a connection stayed up 60 s), and the clients are told in
 * events and in a bracketed line of output. With "remoteTmux" the shell runs in
 * `tmux new-session -A -s termhost-ID` on the remote, so a reconnect (or a later daemon, which
 * lists such sessions again) returns to the same shell; without it a reconnect starts a new
 * shell and says so. The session ends when its shell exits or kill() ends it; attached sinks
 * are then closed.
 *
 * The host (the daemon's attach protocol), a web front end and the assistant all reach the
 * sessions through this table, like any third-party plugin would: declare
 * "org.termhost.ssh.sessions/1" in requires_services, add "org.termhost.ssh" to after, and look
 * it up with host->get_service(host, TERMHOST_SSH_SESSIONS). The table follows host.h's
 * "Provider context": every entry point takes the table itself as `self`.
 *
 * Session IDs are short lowercase hex strings (e.g. "3fa2c1"), unique in the process.
 *
 * Threading: every entry point may be called from any thread and returns without waiting for
 * the network, except open(), which connects and authenticates before it returns (seconds),
 * and kill() of a remote tmux session.
 * Sink callbacks run on the session's own thread ([session-thread]) with the session's lock
 * held: they must copy what they need and return promptly (a sink that blocks holds up that
 * session's output for every mirror), and must not call any entry point of this table from
 * inside a callback (it would wait for the lock it runs under): hand the work to another
 * thread instead. */
#ifndef TERMHOST_SSH_SESSIONS_H
#define TERMHOST_SSH_SESSIONS_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../services/store.h"

#define TERMHOST_SSH_SESSIONS "org.termhost.ssh.sessions/1"

/* Where an attachment's output goes; the caller owns it and `user`. The provider copies the
 * struct at attach() (it may live on the caller's stack). */
typedef struct termhost_ssh_session_sink {
   uint32_t struct_size;
   void *user;

   /* Terminal output, in order. The first call after attach() is the replay: ESC [ 0 m then
    * the ring's contents (just ESC [ 0 m when the ring is empty). data is valid during the call
    * only. [session-thread, or the attach() caller's thread for the replay] */
   void (*output)(void *user, const uint8_t *data, size_t size);

   /* One event: a UTF-8 JSON object of exactly size bytes, NOT NUL-terminated, the same
    * objects events() lists (e.g. {"at":1765000000.25,"kind":"exit","status":0}). data is
    * valid during the call only. [session-thread, or the thread of another client's attach(),
    * detach() or kill(), whose "attached", "detached" or "exit" it reports] */
   void (*event)(void *user, const char *json, size_t size);

   /* The last call for this attachment: detach() was called, kill() ended the session, or the
    * session ended. reason: NUL-terminated UTF-8, borrowed for the call. After closed returns
    * the provider never touches user again, so the caller may free it there. Called exactly
    * once per successful attach(). [any-thread] */
   void (*closed)(void *user, const char *reason);
} termhost_ssh_session_sink_t;

typedef struct termhost_ssh_sessions {   /* implemented by the SSH plugin */
   uint32_t struct_size;
   void *context;   /* the providing instance's; consumers never touch it */

   /* Opens a session: connects to a host (a saved host's name or "user@host[:port]") and
    * starts a shell on a PTY. request: NUL-terminated UTF-8 JSON, borrowed for the call:
    *   {"host":"prod","columns":120,"rows":40,"term":"xterm-256color",
    *    "forwardAgent":false,"jump":["bastion"],"remoteTmux":true}
    * (columns and rows 1..10000, default 80x24; term at most 64 printable ASCII bytes, default
    * xterm-256color; forwardAgent and jump optional, as ssh's -A and -J; remoteTmux defaults
    * to the saved host's `--remote-tmux`, else false.) Nothing is ever
    * asked: an unknown or changed host key, or a credential that would need a prompt, fails
    * closed with TERMHOST_ERR_DENIED and a message that says what to run. On success sink gets
    * the session's JSON (as list() shows one) once. [any-thread; blocks while connecting] */
   termhost_status (*open)(const struct termhost_ssh_sessions *self, const char *request,
                           termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Calls sink once with a JSON array of the sessions, oldest first:
    *   [{"id":"3fa2c1","name":"prod","host":"prod","user":"deploy","state":"idle",
    *     "clients":1,"columns":120,"rows":40,"startedAt":1765000000.0,
    *     "lastOutputAt":1765000012.5,"ringBytes":5120,"remoteTmux":false}]
    * state is "working" (output in the last 5 s), "idle" (connected, quiet), "reconnecting"
    * (the connection was lost) or "ended" (kept for 5 minutes after it ended, with endedAt
    * and reason, so its exit can still be read). Times are seconds since 1970 (UTC); lastOutputAt is null
    * before the first output. Since ABI 1.8: "pendingApprovals" counts the assistant's Asks
    * on the session's saved host that wait in the daemon for an answer, and while any waits
    * the state is "waiting" (unless reconnecting or ended); treat a state you do not know
    * as "idle". [any-thread] */
   termhost_status (*list)(const struct termhost_ssh_sessions *self, termhost_value_sink sink, void *user,
                           termhost_error_t *err);

   /* Attaches sink to session: replays the ring (see output above), then streams. *attachment
    * gets a token for detach(). TERMHOST_ERR_NOT_FOUND for an unknown or ended session.
    * sink: copied; every member must be non-NULL. [any-thread] */
   termhost_status (*attach)(const struct termhost_ssh_sessions *self, const char *session,
                             const termhost_ssh_session_sink_t *sink, uint64_t *attachment,
                             termhost_error_t *err);

   /* Detaches: closed() has been called when this returns (here, or already by the session's
    * end). An unknown or spent token is TERMHOST_ERR_NOT_FOUND. The session goes on.
    * [any-thread, never from a sink callback] */
   termhost_status (*detach)(const struct termhost_ssh_sessions *self, uint64_t attachment,
                             termhost_error_t *err);

   /* Sends size bytes of input to the session's shell, in order with other writes. Input
    * beyond 1 MiB not yet sent is TERMHOST_ERR_BUSY (nothing of data is taken). [any-thread] */
   termhost_status (*write)(const struct termhost_ssh_sessions *self, const char *session,
                            const uint8_t *data, size_t size, termhost_error_t *err);

   /* Sets the PTY's size (1..10000 each); the latest call wins. [any-thread] */
   termhost_status (*resize)(const struct termhost_ssh_sessions *self, const char *session,
                             uint32_t columns, uint32_t rows, termhost_error_t *err);

   /* Calls sink once with a JSON array of the session's events at or after `since` (seconds
    * since 1970; 0 for all), oldest first, at most the last 200:
    *   {"at":T,"kind":"opened"}  {"at":T,"kind":"restored"} (listed again by a later daemon)
    *   {"at":T,"kind":"title","title":"..."}  {"at":T,"kind":"bell"}
    *   {"at":T,"kind":"attached","clients":2}  {"at":T,"kind":"detached","clients":1}
    *   {"at":T,"kind":"disconnected","reason":"...","retryInSeconds":1}
    *   {"at":T,"kind":"reconnect-failed","reason":"...","retryInSeconds":2}
    *   {"at":T,"kind":"reconnected","shell":"tmux"|"new"}  {"at":T,"kind":"no-remote-tmux"}
    *   {"at":T,"kind":"exit","status":0}  {"at":T,"kind":"exit","killed":true}
    *   since ABI 1.8, the assistant's Asks on the session's saved host (never the command):
    *   {"at":T,"kind":"approval","id":3,"tool":"ssh_exec","run":"...","expiresAt":T}
    *   {"at":T,"kind":"approval-decided","id":3,"decision":"allowed"|"denied"|"expired"}
    * Kinds may be added: skip one you do not know.
    * A title is the remote's own text: at most 256 bytes, control, bidirectional and
    * zero-width characters shown as escapes. [any-thread] */
   termhost_status (*events)(const struct termhost_ssh_sessions *self, const char *session, double since,
                             termhost_value_sink sink, void *user, termhost_error_t *err);

   /* Ends the session: with remote tmux, ends the remote tmux session first (over a connection
    * of its own, so this waits for the network, within the connect timeout); then closes its
    * channel and connection and every attachment (reason "killed"). Returns once the session
    * has ended (its thread waited for at most 5 s more). [any-thread] */
   termhost_status (*kill)(const struct termhost_ssh_sessions *self, const char *session, termhost_error_t *err);
} termhost_ssh_sessions_t;

#endif /* TERMHOST_SSH_SESSIONS_H */
