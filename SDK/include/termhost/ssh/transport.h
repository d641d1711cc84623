/* termhost/ssh/transport.h: SSH as a service, offered by the SSH plugin (org.termhost.ssh).
 *
 * Other plugins never connect, verify host keys or authenticate themselves: they ask this
 * service for an authenticated connection and use it. Trust and authentication prompts go to
 * the scene passed to open() (scene 0, or a scene without a terminal, fails closed).
 * Declare "org.termhost.ssh.transport/1" in requires_services and look it up with
 * host->get_service(host, TERMHOST_SSH_TRANSPORT) once your feature is activated.
 *
 * Threading: each connection has one serial executor (libssh2 allows one caller per session).
 * Every call on a connection may be made from any thread; the service runs it on that
 * connection's executor and returns when it is done. Calls on different connections run in
 * parallel. exec() and exec_bounded() hold the executor only for short steps, so a long
 * command does not hold up the connection's other traffic. Callbacks that run on the executor
 * ([session]) must not call this service on the same connection: it would wait for itself (a
 * debug build of the SSH plugin traps there instead). */
#ifndef TERMHOST_SSH_TRANSPORT_H
#define TERMHOST_SSH_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"
#include "../services/store.h"

#define TERMHOST_SSH_TRANSPORT "org.termhost.ssh.transport/1"

/* An authenticated SSH connection, owned by the SSH plugin until close(). The pointer is an
 * opaque handle, never memory to read: each open() returns one not used before, so a handle
 * used after close() gets TERMHOST_ERR_NOT_FOUND rather than reaching another connection. */
typedef struct termhost_ssh_connection termhost_ssh_connection_t;

/* Work to run on a connection's executor with its libssh2 session (LIBSSH2_SESSION *, in
 * blocking mode) and socket. Must not free the session, close the socket or keep either past
 * the call. Return TERMHOST_OK or a code with a message in *err. [session] */
typedef termhost_status (*termhost_ssh_session_body)(void *user, void *libssh2_session, int socket,
                                                     termhost_error_t *err);

typedef struct termhost_ssh_transport {   /* implemented by the SSH plugin */
   uint32_t struct_size;

   /* Connects to destination: a saved host's name or "user@host[:port]". The host key is
    * verified and the user authenticated inside this call, prompting on `scene` when needed.
    * *out: owned by the SSH plugin until close(*out).
    * Errors: TERMHOST_ERR_DENIED when the host key or the credentials were refused (including
    * a prompt that could not be shown: fail closed), TERMHOST_ERR_IO for network and server
    * failures; the message is the one `termhost exec` would print. [any-thread] */
   termhost_status (*open)(const termhost_host_t *caller, termhost_scene_id scene, const char *destination,
                           termhost_ssh_connection_t **out, termhost_error_t *err);

   /* Disconnects (bounded in time) and frees the connection. NULL is ignored. Connections a
    * caller still holds when the SSH plugin shuts down are closed by it (callers shut down
    * first); close them yourself in your shutdown(), and wait there for closes you started
    * on other threads. [any-thread] */
   void (*close)(termhost_ssh_connection_t *connection);

   /* Runs command on an exec channel. stdin_data (stdin_size bytes, may be NULL) is sent and
    * then end-of-file. on_stdout and on_stderr (either may be NULL) receive the output in
    * order, as it arrives; their data is valid during the call only. *exit_status gets the
    * remote status (255 if the command was killed by a signal). Since ABI 1.2 this is
    * exec_bounded() with no deadline and no cancel flag: the channel runs in steps, other
    * traffic on the connection goes on meanwhile, and the sinks run on the calling thread.
    * [any-thread] */
   termhost_status (*exec)(termhost_ssh_connection_t *connection, const char *command,
                           const void *stdin_data, size_t stdin_size,
                           termhost_value_sink on_stdout, termhost_value_sink on_stderr, void *user,
                           int32_t *exit_status, termhost_error_t *err);

   /* Runs body on the connection's executor with the raw session, for protocols the service
    * does not wrap (SFTP). [any-thread; body runs on the connection's executor] */
   termhost_status (*with_session)(termhost_ssh_connection_t *connection, termhost_ssh_session_body body,
                                   void *user, termhost_error_t *err);

   /* Channels bridged to local sockets. Each of these gives the caller one end of a local
    * stream socket (AF_UNIX) in *fd, owned by the caller: read and write it like a TCP
    * connection, shut down writing to send end-of-file, close it to close the channel. The SSH
    * plugin moves the bytes on the connection's executor, with flow control: it stops reading
    * the channel while the caller is not reading its socket. Bridges pause while a
    * with_session() call runs on the same connection (since 1.2, not during exec()). */

   /* A direct-tcpip channel: the server connects to host:port (as seen from the server), like
    * ssh -L. [any-thread] */
   termhost_status (*open_direct_tcpip)(termhost_ssh_connection_t *connection, const char *host, int32_t port,
                                        int32_t *fd, termhost_error_t *err);

   /* A shell on a PTY of term (e.g. "xterm-256color"), columns x rows. [any-thread] */
   termhost_status (*open_shell)(termhost_ssh_connection_t *connection, const char *term, int32_t columns,
                                 int32_t rows, int32_t *fd, termhost_error_t *err);

   /* Changes the PTY size of the shell whose local end is fd. A failure is reported, never
    * fatal to the shell. [any-thread] */
   termhost_status (*resize_shell)(termhost_ssh_connection_t *connection, int32_t fd, int32_t columns,
                                   int32_t rows, termhost_error_t *err);

   /* A remote forward listener, like ssh -R: the server listens on bind_host:port (port 0 lets
    * it choose; *bound_port gets the port). For each connection it accepts, on_accept(user,
    * fd, origin_host, origin_port) is called on the connection's executor with the caller's
    * end of a bridged socket (owned by the caller from then on); origin_host is borrowed for
    * the call. The listener lasts until cancel_forward() or close(). [any-thread] */
   termhost_status (*forward_listen)(termhost_ssh_connection_t *connection, const char *bind_host, int32_t port,
                                     int32_t *bound_port,
                                     void (*on_accept)(void *user, int32_t fd, const char *origin_host, int32_t origin_port),
                                     void *user, termhost_error_t *err);

   /* Stops the listener on bound_port; connections already accepted go on. [any-thread] */
   termhost_status (*cancel_forward)(termhost_ssh_connection_t *connection, int32_t bound_port, termhost_error_t *err);

   /* ---- Added in ABI 1.1 (watch, open_exec, splice_direct_tcpip, end_spliced): check
    *      TERMHOST_HAS_FIELD(transport, termhost_ssh_transport_t, <field>) before use. ---- */

   /* Added in ABI 1.1. Asks to be told when the connection dies: keepalive/dead-peer detection (the saved host's
    * or the SSH feature's keepaliveInterval x keepaliveCountMax), a socket error, or the server
    * disconnecting. The connection is watched even while idle (no channels, no listeners).
    * on_lost(user, reason) is called at most once per watch, on the connection's executor
    * ([session]); reason is the message an operator should see, borrowed for the call. It must
    * not call this service on the same connection (close() included): hand the news to another
    * thread. After the loss, every bridged socket of the connection reads end-of-file, and
    * further calls on it fail with TERMHOST_ERR_IO; the caller still close()s it.
    * user: borrowed until on_lost has run or close() has returned, whichever comes first.
    * Several watches on one connection are allowed. Returns TERMHOST_ERR_IO (and does not
    * watch) when the connection is already lost. [any-thread] */
   termhost_status (*watch)(termhost_ssh_connection_t *connection, void (*on_lost)(void *user, const char *reason),
                            void *user, termhost_error_t *err);

   /* Added in ABI 1.1. Runs command on an exec channel bridged to a local socket, like open_direct_tcpip: the
    * command's stdout arrives on *fd, bytes written to *fd go to its stdin, shutdown(*fd,
    * SHUT_WR) sends end-of-file, close(*fd) closes the channel (the remote command then gets
    * SIGPIPE on its next write). stderr is read and discarded (redirect it into stdout in
    * the command if you need it); the exit status is not reported: end the output with your
    * own marker if you need to tell success from failure. For long-lived commands (a sampling
    * loop) where exec() would hold the connection's executor until the command ends.
    * *fd: owned by the caller. [any-thread] */
   termhost_status (*open_exec)(termhost_ssh_connection_t *connection, const char *command, int32_t *fd,
                                termhost_error_t *err);

   /* Added in ABI 1.1. Joins a stream socket the caller accepted (a TCP client, say) to a new direct-tcpip
    * channel to host:port, with no socket of the SSH plugin's own in between and without
    * waiting: the call queues the channel open and returns. For forwarders (ssh -L, -D): the
    * bytes never pass through the caller, and the stream costs no thread hand-off.
    * fd: the SSH plugin's from the call on, whatever the outcome; it makes fd non-blocking,
    * moves the bytes on the connection's executor with the same flow control as a bridged
    * socket, and closes fd when the stream ends. initial (initial_size bytes, may be NULL;
    * copied during the call, at most 65536) goes to the channel before anything read from fd,
    * such as bytes a SOCKS client sent right after its handshake.
    * on_done(user, status, message) is called exactly once, on the connection's executor, after
    * fd was closed: TERMHOST_OK when the stream ran and ended (both directions finished, or
    * end_spliced), otherwise the reason it could not run or was cut (the server refused the
    * channel, the connection was lost or closed); message is borrowed for the call. It must not
    * call this service on the same connection. user: borrowed until on_done has run.
    * *stream: an id for end_spliced(), never reused on the connection (may be NULL).
    * Returned errors (fd closed, on_done never called): TERMHOST_ERR_NOT_FOUND for a closed
    * connection, TERMHOST_ERR_INVALID_ARGUMENT. Everything else, a lost connection included,
    * comes through on_done.
    * [any-thread, non-blocking; on_done on the connection's executor] */
   termhost_status (*splice_direct_tcpip)(termhost_ssh_connection_t *connection, const char *host, int32_t port,
                                          int32_t fd, const void *initial, size_t initial_size,
                                          void (*on_done)(void *user, termhost_status status, const char *message),
                                          void *user, uint64_t *stream, termhost_error_t *err);

   /* Added in ABI 1.1. Ends a spliced stream now (a forward being stopped): its channel and fd are closed and its
    * on_done follows with TERMHOST_OK. A stream that already ended, or an unknown id, is
    * ignored. [any-thread, non-blocking] */
   void (*end_spliced)(termhost_ssh_connection_t *connection, uint64_t stream);

   /* ---- Added in ABI 1.2 (context, exec_bounded): check TERMHOST_HAS_FIELD before use. ---- */

   /* Added in ABI 1.2. The providing feature instance's own context (see "Provider context"
    * in host.h): the SSH plugin fills it in the table each instance returns from get_service,
    * and its entry points find their instance through it (open() through caller's lookup of
    * this service). Callers never read or write it. */
   void *context;

   /* Added in ABI 1.2. exec() with a deadline and a cancellation flag, run as one channel among
    * the connection's others: the executor is held only for short non-blocking steps, so
    * bridges, splices and other exec calls on the same connection keep moving while it runs.
    * deadline_ms: milliseconds from the call until the command must have finished, 0 for none
    * (at most 86400000, one day). cancel: may be NULL; the caller sets *cancel to non-zero
    * (termhost_ssh_cancel_request) from any thread to stop the command; it is polled at least
    * every 50 ms. On a timeout or a cancel the channel is closed (the remote command sees
    * end-of-file on its input and EPIPE/SIGPIPE on its next write; the server decides what
    * else) and the call returns TERMHOST_ERR_TIMEOUT ("ssh: 'COMMAND' on HOST did not finish
    * within N ms; its channel was closed") or TERMHOST_ERR_CANCELLED ("ssh: 'COMMAND' on HOST
    * was cancelled; its channel was closed"); output already delivered stays delivered.
    * on_stdout/on_stderr are called on the calling thread, never on the executor, so they may
    * call this service (other connections, or other calls on this one). Everything else as
    * exec(). [any-thread] */
   termhost_status (*exec_bounded)(termhost_ssh_connection_t *connection, const char *command,
                                   const void *stdin_data, size_t stdin_size,
                                   termhost_value_sink on_stdout, termhost_value_sink on_stderr, void *user,
                                   uint32_t deadline_ms, const int32_t *cancel,
                                   int32_t *exit_status, termhost_error_t *err);

   /* ---- Added in ABI 1.3 (open_saved): check TERMHOST_HAS_FIELD before use. ---- */

   /* Added in ABI 1.3. open() for work no person watches (tools, services/tools.h): name must
    * be a saved host's name (never "user@host[:port]" and never an option), and nothing is
    * ever prompted, whatever terminal the process has. Errors:
    * TERMHOST_ERR_INVALID_ARGUMENT for a name that is not a saved host; TERMHOST_ERR_DENIED
    * for an unknown or changed host key or a missing credential, the message starting with what
    * the user should run ("run 'termhost ssh NAME' on a terminal to review its host key");
    * TERMHOST_ERR_IO for network and server failures. *out as open(). [any-thread] */
   termhost_status (*open_saved)(const termhost_host_t *caller, const char *name,
                                 termhost_ssh_connection_t **out, termhost_error_t *err);

   /* ---- Added in ABI 1.8 (open_with): check TERMHOST_HAS_FIELD before use. ---- */

   /* Added in ABI 1.8. open() with flags (TERMHOST_SSH_OPEN_*, or'ed; 0 is open() itself;
    * an unknown bit is TERMHOST_ERR_INVALID_ARGUMENT). With TERMHOST_SSH_OPEN_SAVED,
    * destination is a saved host's name and the call is open_saved() (scene is ignored).
    *
    * TERMHOST_SSH_OPEN_SHARED: in the daemon (termhost.daemon/1), when another caller holds a
    * live connection it opened with this flag to the same destination (the same resolved
    * address, port, user, identity, credentials, jump hosts and agent), *out is a new handle
    * on that connection: no TCP connection, key exchange or authentication. Each handle owns
    * what it opened (bridges, shells, splices, remote listeners, watches): its close() ends
    * those, and the last handle's close ends the connection; resize_shell, cancel_forward and
    * end_spliced reach only the handle's own. Calls of all handles share the connection's
    * executor: a with_session() body holds every other user's channels while it runs, so
    * open shared only when your bodies are short (one request), never for bulk transfers.
    * Outside the daemon, or when the operator set connectionIdleTimeout 0, the flag changes
    * nothing. *out: owned by the SSH plugin until close(*out), whether it joined or connected.
    * [any-thread; blocks while connecting, as open()] */
   termhost_status (*open_with)(const termhost_host_t *caller, termhost_scene_id scene, const char *destination,
                                uint32_t flags, termhost_ssh_connection_t **out, termhost_error_t *err);
} termhost_ssh_transport_t;

/* Flags of open_with (added in ABI 1.8). */
#define TERMHOST_SSH_OPEN_SAVED  0x1u   /* destination is a saved host's name; never prompts (open_saved) */
#define TERMHOST_SSH_OPEN_SHARED 0x2u   /* may share a live connection with other shared opens */

/* The cancellation flag of exec_bounded: a plain int32_t the caller owns, read and written
 * atomically so that another thread may set it while the call runs. */
static inline void termhost_ssh_cancel_request(int32_t *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELEASE); }
static inline int termhost_ssh_cancel_requested(const int32_t *flag) {
   return flag != NULL && __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

#endif /* TERMHOST_SSH_TRANSPORT_H */
