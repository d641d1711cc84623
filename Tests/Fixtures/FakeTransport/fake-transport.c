/* An in-process fake of the SSH transport service for the tests (termhost/ssh/transport.h).
 *
 * Plugin and feature org.termhost.ssh, providing "org.termhost.ssh.transport/1": staged INSTEAD
 * of the real SSH plugin, consumers find it exactly where they find the real one. There is no
 * SSH: every "connection" is this machine.
 *   open()          accepts any destination "user@host[:port]" (or a bare name) and returns a
 *                   generation-token handle: a handle used after close() is refused, never
 *                   reaches another connection. "lost@..." is a connection that is lost 100 ms
 *                   after each watch() (on_lost runs then).
 *   exec(), exec_bounded()   run the command here with /bin/sh -c: stdin fed, stdout and stderr
 *                   to the sinks on the calling thread, the exit status (255 for a signal),
 *                   the deadline and the cancel flag honoured (polled every 20 ms).
 *   open_exec()     a socket pair to a local /bin/sh -c (stderr discarded).
 *   open_direct_tcpip(), splice_direct_tcpip()   connect to host:port from here, bridged or
 *                   spliced by a thread of the fake's own.
 *   forward_listen(), cancel_forward()   a listener here; each connection goes to on_accept.
 *   with_session(), open_shell(), resize_shell()   TERMHOST_ERR_UNSUPPORTED: there is no
 *                   libssh2 session and no PTY.
 *
 * Ownership as in transport.h: connections are the fake's until close(); every fd handed out
 * is the caller's; a spliced fd is the fake's from the call on (closed when its stream ends).
 * Commands run in a process group of their own (as sshd gives each session); closing the
 * connection, or its loss, kills those groups, as the end of a channel would end them.
 *
 * Threading: every entry point may be called from any thread; one mutex guards the tables and
 * is never held while a caller's callback runs. on_accept, on_done and on_lost run on threads
 * of the fake's own (the real service runs them on the connection's executor): they may call
 * this service, which the real one forbids on the same connection, so tests must not rely on
 * it. The sinks of exec and exec_bounded run on the calling thread, as in the real service. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <termhost/termhost.h>

extern char **environ;

enum { MAX_CONNECTIONS = 64, MAX_CHILDREN = 64, MAX_LISTENERS = 16, MAX_STREAMS = 1024 };

typedef struct listener {
   int fd, port;
   pthread_t thread;
   void (*on_accept)(void *user, int32_t fd, const char *origin_host, int32_t origin_port);
   void *user;
} listener_t;

/* A bridge or a splice: bytes both ways between a and b until both directions end. */
typedef struct stream {
   uint64_t id;
   int a, b;                 /* a: the caller's side (spliced fd or our socket-pair end); b: TCP */
   char host[256], owner_host[256];
   int port;
   char *initial;
   size_t initial_size;
   int splice;
   void (*on_done)(void *user, termhost_status status, const char *message);
   void *user;
   struct connection *owner;
   uint64_t generation;
} stream_t;

typedef struct connection {
   uint64_t generation;      /* 0: the slot is free */
   char host[256];
   int lose_when_watched, lost, closing;
   pid_t groups[MAX_CHILDREN];
   listener_t *listeners[MAX_LISTENERS];
   stream_t *streams[MAX_STREAMS];
   uint64_t next_stream;
   int busy;                 /* threads of this connection still running (streams, losses) */
} connection_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static connection_t connections[MAX_CONNECTIONS];
static uint64_t next_generation = 1;

static termhost_status fail(termhost_error_t *err, termhost_status code, const char *format, ...) {
   va_list args;
   if (!err) return code;
   err->code = code;
   va_start(args, format);
   vsnprintf(err->message, sizeof err->message, format, args);
   va_end(args);
   return code;
}

/* The handle is the generation itself: never reused, so a stale one finds nothing. */
static termhost_ssh_connection_t *handle_of(const connection_t *c) {
   return (termhost_ssh_connection_t *)(uintptr_t)c->generation;
}

/* The live connection of a handle, with the lock held; NULL (lock released) when none. */
static connection_t *find(termhost_ssh_connection_t *handle) {
   uint64_t generation = (uint64_t)(uintptr_t)handle;
   int i;
   pthread_mutex_lock(&lock);
   for (i = 0; generation && i < MAX_CONNECTIONS; i++)
      if (connections[i].generation == generation && !connections[i].closing) return &connections[i];
   pthread_mutex_unlock(&lock);
   return NULL;
}

static termhost_status not_found(termhost_error_t *err) {
   return fail(err, TERMHOST_ERR_NOT_FOUND, "no such SSH connection: it was closed, or the handle is not one open() returned");
}

/* A usable connection (lock held) or an error (lock released). */
static connection_t *usable(termhost_ssh_connection_t *handle, termhost_status *rc, termhost_error_t *err) {
   connection_t *c = find(handle);
   if (!c) { *rc = not_found(err); return NULL; }
   if (c->lost) {
      *rc = fail(err, TERMHOST_ERR_IO, "ssh: the connection to %s was lost", c->host);
      pthread_mutex_unlock(&lock);
      return NULL;
   }
   *rc = TERMHOST_OK;
   return c;
}

static termhost_status fake_open(const termhost_host_t *caller, termhost_scene_id scene, const char *destination,
                                 termhost_ssh_connection_t **out, termhost_error_t *err) {
   const char *at, *host;
   size_t length;
   int i;
   (void)scene;
   if (!caller || !destination || !*destination || !out)
      return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open needs a caller, a destination and a place for the handle");
   at = strchr(destination, '@');
   host = at ? at + 1 : destination;
   length = strcspn(host, ":");
   pthread_mutex_lock(&lock);
   for (i = 0; i < MAX_CONNECTIONS && connections[i].generation; i++) {}
   if (i == MAX_CONNECTIONS) {
      pthread_mutex_unlock(&lock);
      return fail(err, TERMHOST_ERR_BUSY, "the fake transport holds %d connections already", MAX_CONNECTIONS);
   }
   memset(&connections[i], 0, sizeof connections[i]);
   connections[i].generation = next_generation++;
   snprintf(connections[i].host, sizeof connections[i].host, "%.*s", (int)(length < 255 ? length : 255), host);
   connections[i].lose_when_watched = at && (size_t)(at - destination) == 4 && strncmp(destination, "lost", 4) == 0;
   *out = handle_of(&connections[i]);
   pthread_mutex_unlock(&lock);
   return TERMHOST_OK;
}

/* Ends what runs on a connection (lock held): its process groups are killed, its listeners
 * and streams shut down so their threads finish. */
static void end_everything(connection_t *c) {
   int i;
   for (i = 0; i < MAX_CHILDREN; i++)
      if (c->groups[i] > 0) { kill(-c->groups[i], SIGKILL); c->groups[i] = 0; }
   for (i = 0; i < MAX_LISTENERS; i++)
      if (c->listeners[i]) shutdown(c->listeners[i]->fd, SHUT_RDWR);
   for (i = 0; i < MAX_STREAMS; i++)
      if (c->streams[i]) { shutdown(c->streams[i]->a, SHUT_RDWR); shutdown(c->streams[i]->b, SHUT_RDWR); }
}

static void fake_close(termhost_ssh_connection_t *handle) {
   connection_t *c = find(handle);
   listener_t *ls[MAX_LISTENERS];
   int i;
   if (!c) return;
   c->closing = 1;
   end_everything(c);
   memcpy(ls, c->listeners, sizeof ls);
   memset(c->listeners, 0, sizeof c->listeners);
   while (c->busy) pthread_cond_wait(&idle, &lock);
   pthread_mutex_unlock(&lock);
   for (i = 0; i < MAX_LISTENERS; i++)
      if (ls[i]) { pthread_join(ls[i]->thread, NULL); close(ls[i]->fd); free(ls[i]); }
   pthread_mutex_lock(&lock);
   c->generation = 0;
   pthread_mutex_unlock(&lock);
}

static void remember_group(connection_t *c, pid_t pid) {
   int i;
   for (i = 0; i < MAX_CHILDREN; i++) if (c->groups[i] <= 0) { c->groups[i] = pid; return; }
}

static void forget_group(termhost_ssh_connection_t *handle, pid_t pid) {
   connection_t *c = find(handle);
   int i;
   if (!c) return;
   for (i = 0; i < MAX_CHILDREN; i++) if (c->groups[i] == pid) c->groups[i] = 0;
   pthread_mutex_unlock(&lock);
}

/* Starts /bin/sh -c command in a process group of its own with the given descriptors as its
 * 0, 1 and 2 (-1: /dev/null); the pid, or -1. */
static pid_t spawn_shell(const char *command, int in, int out, int errfd) {
   posix_spawn_file_actions_t actions;
   posix_spawnattr_t attr;
   char *argv[] = { "sh", "-c", (char *)command, NULL };
   pid_t pid = -1;
   int fds[3], i, rc;
   fds[0] = in; fds[1] = out; fds[2] = errfd;
   posix_spawn_file_actions_init(&actions);
   posix_spawnattr_init(&attr);
   posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
   posix_spawnattr_setpgroup(&attr, 0);
   for (i = 0; i < 3; i++) {
      if (fds[i] >= 0) posix_spawn_file_actions_adddup2(&actions, fds[i], i);
      else posix_spawn_file_actions_addopen(&actions, i, "/dev/null", i == 0 ? O_RDONLY : O_WRONLY, 0);
   }
   rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
   posix_spawn_file_actions_destroy(&actions);
   posix_spawnattr_destroy(&attr);
   return rc == 0 ? pid : -1;
}

static int64_t now_ms(void) {
   struct timespec t;
   clock_gettime(CLOCK_MONOTONIC, &t);
   return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static termhost_status fake_exec_bounded(termhost_ssh_connection_t *handle, const char *command,
                                         const void *stdin_data, size_t stdin_size,
                                         termhost_value_sink on_stdout, termhost_value_sink on_stderr, void *user,
                                         uint32_t deadline_ms, const int32_t *cancel,
                                         int32_t *exit_status, termhost_error_t *err) {
   int in[2], out[2], errp[2], open_fds, status = 0;
   size_t fed = 0;
   char buf[65536], host[256];
   int64_t until;
   termhost_status rc;
   pid_t pid;
   connection_t *c;
   if (!command) return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "exec needs a command");
   if (deadline_ms > 86400000u)
      return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "exec_bounded's deadline_ms must be a whole number of ms from 0 to 86400000, not '%u'", deadline_ms);
   if (!(c = usable(handle, &rc, err))) return rc;
   snprintf(host, sizeof host, "%s", c->host);
   if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
      pthread_mutex_unlock(&lock);
      return fail(err, TERMHOST_ERR_IO, "ssh: cannot make pipes: %s", strerror(errno));
   }
   pid = spawn_shell(command, in[0], out[1], errp[1]);
   if (pid > 0) remember_group(c, pid);
   pthread_mutex_unlock(&lock);
   close(in[0]); close(out[1]); close(errp[1]);
   if (pid < 0) {
      close(in[1]); close(out[0]); close(errp[0]);
      return fail(err, TERMHOST_ERR_IO, "ssh: cannot start /bin/sh");
   }
   fcntl(in[1], F_SETFL, O_NONBLOCK);
   if (!stdin_data || stdin_size == 0) { close(in[1]); in[1] = -1; }
   until = deadline_ms ? now_ms() + deadline_ms : 0;
   rc = TERMHOST_OK;
   for (open_fds = 2; open_fds > 0;) {
      struct pollfd p[3] = { { out[0], POLLIN, 0 }, { errp[0], POLLIN, 0 }, { in[1], POLLOUT, 0 } };
      int i;
      if (termhost_ssh_cancel_requested(cancel)) { rc = TERMHOST_ERR_CANCELLED; break; }
      if (until && now_ms() >= until) { rc = TERMHOST_ERR_TIMEOUT; break; }
      if (poll(p, 3, 20) < 0 && errno != EINTR) break;
      if (p[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
         ssize_t n = write(in[1], (const char *)stdin_data + fed, stdin_size - fed);
         if (n > 0) fed += (size_t)n;
         if (n < 0 || fed == stdin_size) { close(in[1]); in[1] = -1; }
      }
      for (i = 0; i < 2; i++) {
         ssize_t n;
         if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
         n = read(p[i].fd, buf, sizeof buf);
         if (n > 0) {
            termhost_value_sink sink = i == 0 ? on_stdout : on_stderr;
            if (sink) sink(user, buf, (size_t)n);
         } else if (n == 0 || errno != EINTR) {
            close(p[i].fd);
            if (i == 0) out[0] = -1; else errp[0] = -1;
            open_fds--;
         }
      }
   }
   if (rc != TERMHOST_OK) kill(-pid, SIGKILL);
   if (in[1] >= 0) close(in[1]);
   if (out[0] >= 0) close(out[0]);
   if (errp[0] >= 0) close(errp[0]);
   while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
   forget_group(handle, pid);
   if (rc == TERMHOST_ERR_TIMEOUT)
      return fail(err, rc, "ssh: '%s' on %s did not finish within %u ms; its channel was closed", command, host, deadline_ms);
   if (rc == TERMHOST_ERR_CANCELLED)
      return fail(err, rc, "ssh: '%s' on %s was cancelled; its channel was closed", command, host);
   if (exit_status) *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
   return TERMHOST_OK;
}

static termhost_status fake_exec(termhost_ssh_connection_t *handle, const char *command,
                                 const void *stdin_data, size_t stdin_size,
                                 termhost_value_sink on_stdout, termhost_value_sink on_stderr, void *user,
                                 int32_t *exit_status, termhost_error_t *err) {
   return fake_exec_bounded(handle, command, stdin_data, stdin_size, on_stdout, on_stderr, user, 0, NULL, exit_status, err);
}

static termhost_status fake_with_session(termhost_ssh_connection_t *handle, termhost_ssh_session_body body,
                                         void *user, termhost_error_t *err) {
   (void)handle; (void)body; (void)user;
   return fail(err, TERMHOST_ERR_UNSUPPORTED, "the fake SSH transport has no libssh2 session: with_session is not available");
}

/* Reaps an open_exec child when it ends, and forgets its group. */
typedef struct { termhost_ssh_connection_t *handle; pid_t pid; } reaping_t;

static void *reap(void *arg) {
   reaping_t r = *(reaping_t *)arg;
   int status;
   free(arg);
   while (waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {}
   forget_group(r.handle, r.pid);
   return NULL;
}

static termhost_status fake_open_exec(termhost_ssh_connection_t *handle, const char *command, int32_t *fd,
                                      termhost_error_t *err) {
   int pair[2];
   termhost_status rc;
   pthread_t thread;
   reaping_t *r;
   pid_t pid;
   connection_t *c;
   if (!command || !fd) return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open_exec needs a command and a place for the fd");
   if (!(c = usable(handle, &rc, err))) return rc;
   if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair)) {
      pthread_mutex_unlock(&lock);
      return fail(err, TERMHOST_ERR_IO, "ssh: cannot make a socket pair: %s", strerror(errno));
   }
   pid = spawn_shell(command, pair[1], pair[1], -1);
   if (pid > 0) remember_group(c, pid);
   pthread_mutex_unlock(&lock);
   close(pair[1]);
   if (pid < 0) { close(pair[0]); return fail(err, TERMHOST_ERR_IO, "ssh: cannot start /bin/sh"); }
   r = malloc(sizeof *r);
   r->handle = handle;
   r->pid = pid;
   pthread_create(&thread, NULL, reap, r);
   pthread_detach(thread);
   *fd = pair[0];
   return TERMHOST_OK;
}

/* A TCP connection to host:port from here, or -1 with errno's text in why. */
static int connect_to(const char *host, int port, char *why, size_t why_size) {
   struct addrinfo hints, *list = NULL, *a;
   char service[16];
   int fd = -1, rc;
   memset(&hints, 0, sizeof hints);
   hints.ai_socktype = SOCK_STREAM;
   snprintf(service, sizeof service, "%d", port);
   if ((rc = getaddrinfo(host, service, &hints, &list)) != 0) {
      snprintf(why, why_size, "%s", gai_strerror(rc));
      return -1;
   }
   for (a = list; a && fd < 0; a = a->ai_next) {
      fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
         snprintf(why, why_size, "%s", strerror(errno));
         close(fd);
         fd = -1;
      }
   }
   freeaddrinfo(list);
   return fd;
}

/* One direction of a stream: from -> to until end-of-file, then half-closes `to`. Each
 * direction has a thread of its own: one thread for both would deadlock once it blocked
 * writing to a peer that is itself blocked writing back. */
typedef struct { int from, to; } direction_t;

static void *copy(void *arg) {
   direction_t *d = arg;
   char buf[65536];
   ssize_t n;
   while ((n = read(d->from, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
      ssize_t off = 0, w = 0;
      while (off < n && (w = send(d->to, buf + off, (size_t)(n - off), MSG_NOSIGNAL)) > 0) off += w;
      if (w < 0) break;
   }
   shutdown(d->to, SHUT_WR);
   return NULL;
}

/* Copies bytes both ways until each direction has ended. */
static void pump(int a, int b) {
   direction_t there = { a, b }, back = { b, a };
   pthread_t thread;
   pthread_create(&thread, NULL, copy, &back);
   copy(&there);
   pthread_join(thread, NULL);
}

static void stream_remove(stream_t *s) {
   int i;
   pthread_mutex_lock(&lock);
   for (i = 0; i < MAX_STREAMS; i++) if (s->owner->streams[i] == s) s->owner->streams[i] = NULL;
   pthread_mutex_unlock(&lock);
}

static void stream_finished(connection_t *owner) {
   pthread_mutex_lock(&lock);
   owner->busy--;
   pthread_cond_broadcast(&idle);
   pthread_mutex_unlock(&lock);
}

/* The thread of a bridged or spliced stream: connects (a splice does not wait for that in the
 * caller), sends the initial bytes, pumps, closes both ends, then reports a splice's end. */
static void *stream_run(void *arg) {
   stream_t *s = arg;
   char why[256] = "", message[1024] = "";
   termhost_status status = TERMHOST_OK;
   connection_t *owner = s->owner;
   if (s->b < 0) s->b = connect_to(s->host, s->port, why, sizeof why);
   if (s->b < 0) {
      status = TERMHOST_ERR_IO;
      snprintf(message, sizeof message, "ssh: %s cannot open a channel to %s port %d: the server's connect failed (%s)",
               s->owner_host, s->host, s->port, why);
   } else {
      if (s->initial_size) (void)!send(s->b, s->initial, s->initial_size, MSG_NOSIGNAL);
      pump(s->a, s->b);
   }
   stream_remove(s);
   close(s->a);
   if (s->b >= 0) close(s->b);
   if (s->splice && s->on_done) s->on_done(s->user, status, message);
   free(s->initial);
   free(s);
   stream_finished(owner);
   return NULL;
}

/* Registers and starts a stream on c (lock held); 0, or -1 when the table is full. */
static int stream_start(connection_t *c, stream_t *s, uint64_t *id) {
   pthread_t thread;
   int i;
   for (i = 0; i < MAX_STREAMS && c->streams[i]; i++) {}
   if (i == MAX_STREAMS) return -1;
   c->streams[i] = s;
   s->owner = c;
   memcpy(s->owner_host, c->host, sizeof s->owner_host);
   s->id = ++c->next_stream;
   if (id) *id = s->id;
   c->busy++;
   pthread_create(&thread, NULL, stream_run, s);
   pthread_detach(thread);
   return 0;
}

static termhost_status fake_open_direct_tcpip(termhost_ssh_connection_t *handle, const char *host, int32_t port,
                                              int32_t *fd, termhost_error_t *err) {
   char why[256] = "", shown[256];
   int pair[2], tcp;
   termhost_status rc;
   stream_t *s;
   connection_t *c;
   if (!host || !fd || port <= 0 || port > 65535)
      return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open_direct_tcpip needs a host, a port from 1 to 65535 and a place for the fd");
   if (!(c = usable(handle, &rc, err))) return rc;
   snprintf(shown, sizeof shown, "%s", c->host);
   pthread_mutex_unlock(&lock);
   if ((tcp = connect_to(host, port, why, sizeof why)) < 0)
      return fail(err, TERMHOST_ERR_IO, "ssh: %s cannot open a channel to %s port %d: the server's connect failed (%s)", shown, host, (int)port, why);
   if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair)) {
      close(tcp);
      return fail(err, TERMHOST_ERR_IO, "ssh: cannot make a socket pair: %s", strerror(errno));
   }
   s = calloc(1, sizeof *s);
   s->a = pair[1];
   s->b = tcp;
   if (!(c = usable(handle, &rc, err)) || (stream_start(c, s, NULL) != 0 && (rc = TERMHOST_ERR_BUSY))) {
      if (c) pthread_mutex_unlock(&lock);
      close(pair[0]); close(pair[1]); close(tcp); free(s);
      return rc == TERMHOST_ERR_BUSY ? fail(err, rc, "the fake transport runs %d streams already", MAX_STREAMS) : rc;
   }
   pthread_mutex_unlock(&lock);
   *fd = pair[0];
   return TERMHOST_OK;
}

static termhost_status fake_splice(termhost_ssh_connection_t *handle, const char *host, int32_t port,
                                   int32_t fd, const void *initial, size_t initial_size,
                                   void (*on_done)(void *user, termhost_status status, const char *message),
                                   void *user, uint64_t *stream, termhost_error_t *err) {
   termhost_status rc;
   stream_t *s;
   connection_t *c;
   if (!host || fd < 0 || port <= 0 || port > 65535 || initial_size > 65536 || (initial_size && !initial) || !on_done) {
      if (fd >= 0) close(fd);
      return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "splice_direct_tcpip needs a host, a port from 1 to 65535, an fd, on_done and at most 65536 initial bytes");
   }
   if (!(c = find(handle))) { close(fd); return not_found(err); }
   /* The fd is ours from here; its stream's threads block on it (a forwarder's accepted
    * socket may come non-blocking). */
   fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
   s = calloc(1, sizeof *s);
   s->a = fd;
   s->b = -1;
   s->splice = 1;
   snprintf(s->host, sizeof s->host, "%s", host);
   s->port = port;
   s->on_done = on_done;
   s->user = user;
   if (initial_size) { s->initial = malloc(initial_size); memcpy(s->initial, initial, initial_size); s->initial_size = initial_size; }
   if (c->lost) {
      /* Lost: the stream cannot run; on_done says so, as for the real service. */
      c->busy++;
      pthread_mutex_unlock(&lock);
      close(fd);
      on_done(user, TERMHOST_ERR_IO, "ssh: the connection was lost");
      free(s->initial);
      free(s);
      stream_finished(c);
      return TERMHOST_OK;
   }
   rc = stream_start(c, s, stream) == 0 ? TERMHOST_OK : TERMHOST_ERR_BUSY;
   pthread_mutex_unlock(&lock);
   if (rc != TERMHOST_OK) { close(fd); free(s->initial); free(s); return fail(err, rc, "the fake transport runs %d streams already", MAX_STREAMS); }
   return TERMHOST_OK;
}

static void fake_end_spliced(termhost_ssh_connection_t *handle, uint64_t id) {
   connection_t *c = find(handle);
   int i;
   if (!c) return;
   for (i = 0; i < MAX_STREAMS; i++)
      if (c->streams[i] && c->streams[i]->id == id && c->streams[i]->splice) {
         shutdown(c->streams[i]->a, SHUT_RDWR);
         if (c->streams[i]->b >= 0) shutdown(c->streams[i]->b, SHUT_RDWR);
      }
   pthread_mutex_unlock(&lock);
}

static void *accept_loop(void *arg) {
   listener_t *l = arg;
   for (;;) {
      struct sockaddr_in from;
      socklen_t size = sizeof from;
      char origin[INET_ADDRSTRLEN] = "127.0.0.1";
      int fd = accept4(l->fd, (struct sockaddr *)&from, &size, SOCK_CLOEXEC);
      if (fd < 0) { if (errno == EINTR || errno == ECONNABORTED) continue; return NULL; }
      inet_ntop(AF_INET, &from.sin_addr, origin, sizeof origin);
      l->on_accept(l->user, fd, origin, ntohs(from.sin_port));
   }
}

static termhost_status fake_forward_listen(termhost_ssh_connection_t *handle, const char *bind_host, int32_t port,
                                           int32_t *bound_port,
                                           void (*on_accept)(void *user, int32_t fd, const char *origin_host, int32_t origin_port),
                                           void *user, termhost_error_t *err) {
   struct sockaddr_in a;
   socklen_t size = sizeof a;
   termhost_status rc;
   listener_t *l;
   connection_t *c;
   int fd, i, one = 1;
   if (!on_accept || port < 0 || port > 65535)
      return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "forward_listen needs on_accept and a port from 0 to 65535");
   memset(&a, 0, sizeof a);
   a.sin_family = AF_INET;
   a.sin_port = htons((uint16_t)port);
   /* Here, "localhost" and an empty or NULL host are loopback; anything else is every address. */
   a.sin_addr.s_addr = htonl(!bind_host || !*bind_host || strcmp(bind_host, "localhost") == 0 || strcmp(bind_host, "127.0.0.1") == 0
                             ? INADDR_LOOPBACK : INADDR_ANY);
   fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
   setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
   if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0) {
      rc = fail(err, TERMHOST_ERR_IO, "ssh: the server refused to listen on %s:%d: %s", bind_host ? bind_host : "", (int)port, strerror(errno));
      close(fd);
      return rc;
   }
   getsockname(fd, (struct sockaddr *)&a, &size);
   if (!(c = usable(handle, &rc, err))) { close(fd); return rc; }
   for (i = 0; i < MAX_LISTENERS && c->listeners[i]; i++) {}
   if (i == MAX_LISTENERS) {
      pthread_mutex_unlock(&lock);
      close(fd);
      return fail(err, TERMHOST_ERR_BUSY, "the fake transport holds %d listeners on a connection already", MAX_LISTENERS);
   }
   l = calloc(1, sizeof *l);
   l->fd = fd;
   l->port = ntohs(a.sin_port);
   l->on_accept = on_accept;
   l->user = user;
   c->listeners[i] = l;
   pthread_create(&l->thread, NULL, accept_loop, l);
   pthread_mutex_unlock(&lock);
   if (bound_port) *bound_port = l->port;
   return TERMHOST_OK;
}

static termhost_status fake_cancel_forward(termhost_ssh_connection_t *handle, int32_t bound_port, termhost_error_t *err) {
   listener_t *l = NULL;
   termhost_status rc;
   connection_t *c;
   int i;
   if (!(c = usable(handle, &rc, err))) return rc;
   for (i = 0; i < MAX_LISTENERS && !l; i++)
      if (c->listeners[i] && c->listeners[i]->port == bound_port) { l = c->listeners[i]; c->listeners[i] = NULL; }
   pthread_mutex_unlock(&lock);
   if (!l) return fail(err, TERMHOST_ERR_NOT_FOUND, "no forward listens on port %d", (int)bound_port);
   shutdown(l->fd, SHUT_RDWR);
   pthread_join(l->thread, NULL);
   close(l->fd);
   free(l);
   return TERMHOST_OK;
}

/* A loss 100 ms after watch() on a "lost@" connection: on_lost, then everything ends. */
typedef struct { termhost_ssh_connection_t *handle; void (*on_lost)(void *user, const char *reason); void *user; } loss_t;

static void *lose_later(void *arg) {
   loss_t loss = *(loss_t *)arg;
   connection_t *c;
   char reason[400];
   free(arg);
   usleep(100000);
   pthread_mutex_lock(&lock);
   c = NULL;
   {
      uint64_t generation = (uint64_t)(uintptr_t)loss.handle;
      int i;
      for (i = 0; i < MAX_CONNECTIONS; i++) if (connections[i].generation == generation) c = &connections[i];
   }
   if (c && !c->closing) {
      c->lost = 1;
      end_everything(c);
      snprintf(reason, sizeof reason, "ssh: the connection to %s was lost (the fake transport was asked to lose it)", c->host);
      pthread_mutex_unlock(&lock);
      loss.on_lost(loss.user, reason);
      pthread_mutex_lock(&lock);
   }
   if (c) { c->busy--; pthread_cond_broadcast(&idle); }
   pthread_mutex_unlock(&lock);
   return NULL;
}

static termhost_status fake_watch(termhost_ssh_connection_t *handle, void (*on_lost)(void *user, const char *reason),
                                  void *user, termhost_error_t *err) {
   termhost_status rc;
   pthread_t thread;
   connection_t *c;
   loss_t *loss;
   if (!on_lost) return fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "watch needs on_lost");
   if (!(c = usable(handle, &rc, err))) return rc;
   if (c->lose_when_watched) {
      loss = malloc(sizeof *loss);
      loss->handle = handle;
      loss->on_lost = on_lost;
      loss->user = user;
      c->busy++;
      pthread_create(&thread, NULL, lose_later, loss);
      pthread_detach(thread);
   }
   pthread_mutex_unlock(&lock);
   return TERMHOST_OK;
}

static termhost_status fake_open_shell(termhost_ssh_connection_t *handle, const char *term, int32_t columns,
                                       int32_t rows, int32_t *fd, termhost_error_t *err) {
   (void)handle; (void)term; (void)columns; (void)rows; (void)fd;
   return fail(err, TERMHOST_ERR_UNSUPPORTED, "the fake SSH transport has no PTY shells");
}

static termhost_status fake_resize_shell(termhost_ssh_connection_t *handle, int32_t fd, int32_t columns,
                                         int32_t rows, termhost_error_t *err) {
   (void)handle; (void)fd; (void)columns; (void)rows;
   return fail(err, TERMHOST_ERR_UNSUPPORTED, "the fake SSH transport has no PTY shells");
}

/* The whole table: consumers may check struct_size (TERMHOST_HAS_FIELD) for any field. The 1.3
 * open_saved is NULL: the fake knows no saved hosts, and a NULL member means "not offered".
 * So is the 1.8 open_with: a caller that asks to share gets an ordinary open(). */
static const termhost_ssh_transport_t transport = {
   sizeof(termhost_ssh_transport_t), fake_open, fake_close, fake_exec, fake_with_session,
   fake_open_direct_tcpip, fake_open_shell, fake_resize_shell, fake_forward_listen, fake_cancel_forward,
   fake_watch, fake_open_exec, fake_splice, fake_end_spliced, NULL, fake_exec_bounded, NULL, NULL
};

static const void *get_service(const termhost_feature_t *f, const char *service_id) {
   (void)f;
   return strcmp(service_id, TERMHOST_SSH_TRANSPORT) == 0 ? &transport : NULL;
}

/* Callers close their connections in their own shutdown (they shut down first); what is left
 * is closed here. */
static void shutdown_feature(const termhost_feature_t *f) {
   int i;
   (void)f;
   for (i = 0; i < MAX_CONNECTIONS; i++) {
      termhost_ssh_connection_t *handle;
      pthread_mutex_lock(&lock);
      handle = connections[i].generation ? handle_of(&connections[i]) : NULL;
      pthread_mutex_unlock(&lock);
      if (handle) fake_close(handle);
   }
}

static const char *const provided[] = { TERMHOST_SSH_TRANSPORT, NULL };
static const termhost_feature_descriptor_t desc = {
   sizeof(termhost_feature_descriptor_t), "org.termhost.ssh", "0.1.0", "SSH (fake)", NULL, 100,
   TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, provided, NULL, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t inst = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};
static termhost_feature_t live;
static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) { (void)x; return i ? NULL : &desc; }
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s, termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   live = inst;
   live.get_service = get_service;
   live.shutdown = shutdown_feature;
   return &live;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)host; (void)err; return true; }
static void deinit(void) {}
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) ? NULL : &factory; }
static const termhost_plugin_entry_t entry = { TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.termhost.ssh", "0.1.0", init, deinit, get_factory };
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
