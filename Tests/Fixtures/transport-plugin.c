/* A C plugin for the tests: `termhost tp HOST` opens a connection through the SSH transport
 * service, runs a command, closes it, then uses the stale handle, and prints each result;
 * `tp tcp|shell|listen|splice HOST ...` try its channels; `tp deadline|cancel|parallel|status HOST ...`
 * exec_bounded's deadline, its cancel flag set from another thread, a short exec that
 * completes while a long one runs on the same connection, and the exit status it reports. */
/* Declares ABI 1.1: exec_bounded (1.2) is used only after TERMHOST_HAS_FIELD says it is there. */
#define TERMHOST_ABI_MINOR_NEEDED 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>
#include <termhost/termhost.h>

static const termhost_host_t *H;

static void print(void *user, const void *data, size_t size) {
   dprintf(*(int *)user, "out: %.*s", (int)size, (const char *)data);
}

static volatile int accepted = 0;

static void on_accept(void *user, int32_t fd, const char *origin_host, int32_t origin_port) {
   const char *text = "hello from the forward\n";
   (void)user; (void)origin_host; (void)origin_port;
   (void)!write(fd, text, strlen(text));
   close(fd);
   accepted = 1;
}

/* Reads fd to end-of-file into buf (NUL-terminated); returns the length. */
static size_t read_all(int fd, char *buf, size_t size) {
   size_t used = 0;
   ssize_t n;
   while (used + 1 < size && (n = read(fd, buf + used, size - 1 - used)) > 0) used += (size_t)n;
   buf[used] = '\0';
   return used;
}

/* splice_direct_tcpip's on_done: runs on the connection's executor; records and returns. */
typedef struct { volatile int done; termhost_status status; char message[512]; } splice_result;

static void on_done(void *user, termhost_status status, const char *message) {
   splice_result *r = user;
   r->status = status;
   snprintf(r->message, sizeof r->message, "%s", message ? message : "(null)");
   r->done = 1;
}

static void wait_done(splice_result *r) {
   int i;
   for (i = 0; i < 200 && !r->done; i++) usleep(50000);
}

/* `tp splice HOST PORT TEXT`: the far end of a socket pair stands in for an accepted client.
 * Prints what came back, how each stream ended, and the refusals. */
static void splices(int out, termhost_ssh_connection_t *c, const termhost_ssh_transport_t *ssh, int port, const char *text) {
   splice_result a = { 0, -1, "" }, b = { 0, -1, "" }, e = { 0, -1, "" };
   termhost_error_t err;
   char buf[65536];
   uint64_t id = 0, id2 = 0;
   int pair[2];
   const char *first = "[initial]";
   socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
   /* Initial bytes first, then what the client writes; the service upper-cases the lot. */
   dprintf(out, "splice: %d\n", (int)ssh->splice_direct_tcpip(c, "127.0.0.1", port, pair[0], first, strlen(first), on_done, &a, &id, &err));
   (void)!write(pair[1], text, strlen(text));
   shutdown(pair[1], SHUT_WR);
   read_all(pair[1], buf, sizeof buf);
   close(pair[1]);
   wait_done(&a);
   dprintf(out, "got: %s\ndone: %d %s\n", buf, (int)a.status, a.message);
   /* A target nobody listens on: the open fails, and on_done says why. */
   socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
   ssh->splice_direct_tcpip(c, "127.0.0.1", 1, pair[0], NULL, 0, on_done, &b, NULL, &err);
   wait_done(&b);
   dprintf(out, "refused: %d %s\n", (int)b.status, strstr(b.message, "cannot open a channel to 127.0.0.1 port 1") ? "named" : b.message);
   dprintf(out, "client sees: %zd\n", read(pair[1], buf, sizeof buf));
   close(pair[1]);
   /* Ended by the caller while idle: the client reads end-of-file and on_done says OK. */
   socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
   ssh->splice_direct_tcpip(c, "127.0.0.1", port, pair[0], NULL, 0, on_done, &e, &id2, &err);
   ssh->end_spliced(c, id2);
   ssh->end_spliced(c, id2);   /* twice is harmless */
   wait_done(&e);
   dprintf(out, "ended: %d ids differ: %d client sees: %zd\n", (int)e.status, id != id2, read(pair[1], buf, sizeof buf));
   close(pair[1]);
   dprintf(out, "bad: %d\n", (int)ssh->splice_direct_tcpip(c, NULL, port, -1, NULL, 0, on_done, &e, NULL, &err));
}

static int32_t channels(const termhost_command_invocation_t *inv, const termhost_ssh_transport_t *ssh) {
   termhost_ssh_connection_t *c = NULL;
   termhost_error_t err;
   char buf[65536];
   int32_t fd = -1, bound = 0;
   int out = inv->stdout_fd, i;
   const char *mode = inv->argv[0];
   if (ssh->open(H, inv->scene, inv->argv[1], &c, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "%s\n", err.message);
      return 255;
   }
   if (strcmp(mode, "splice") == 0 && inv->argc == 4) {
      splices(out, c, ssh, atoi(inv->argv[2]), inv->argv[3]);
   } else if (strcmp(mode, "tcp") == 0 && inv->argc == 4) {
      if (ssh->open_direct_tcpip(c, "127.0.0.1", atoi(inv->argv[2]), &fd, &err) != TERMHOST_OK) {
         dprintf(out, "error: %s\n", err.message);
      } else {
         (void)!write(fd, inv->argv[3], strlen(inv->argv[3]));
         shutdown(fd, SHUT_WR);
         read_all(fd, buf, sizeof buf);
         dprintf(out, "got: %s\n", buf);
         close(fd);
      }
   } else if (strcmp(mode, "shell") == 0) {
      const char *script = "stty size; echo shell-$((40+2)); exit\n";
      if (ssh->open_shell(c, "xterm", 100, 30, &fd, &err) != TERMHOST_OK) {
         dprintf(out, "error: %s\n", err.message);
      } else {
         dprintf(out, "resize: %d\n", (int)ssh->resize_shell(c, fd, 120, 40, &err));
         dprintf(out, "resize unknown fd: %d\n", (int)ssh->resize_shell(c, 9999, 80, 24, &err));
         (void)!write(fd, script, strlen(script));
         read_all(fd, buf, sizeof buf);
         dprintf(out, "%s\n", strstr(buf, "shell-42") ? "shell ok" : buf);
         dprintf(out, "%s\n", strstr(buf, "40 120") ? "size ok" : "size wrong");
         close(fd);
      }
   } else if (strcmp(mode, "listen") == 0) {
      if (ssh->forward_listen(c, "127.0.0.1", 0, &bound, on_accept, NULL, &err) != TERMHOST_OK) {
         dprintf(out, "error: %s\n", err.message);
      } else {
         dprintf(out, "listening %d\n", (int)bound);
         for (i = 0; i < 200 && !accepted; i++) usleep(50000);
         dprintf(out, "%s\n", accepted ? "accepted" : "nobody came");
         dprintf(out, "cancel: %d\n", (int)ssh->cancel_forward(c, bound, &err));
         dprintf(out, "cancel again: %d\n", (int)ssh->cancel_forward(c, bound, &err));
      }
   }
   ssh->close(c);
   return 0;
}

/* A long exec on its own thread; `started` is set once its first output arrived. */
typedef struct {
   const termhost_ssh_transport_t *ssh;
   termhost_ssh_connection_t *c;
   const char *command;
   int32_t cancel;
   volatile int started, finished;
   termhost_status rc;
   termhost_error_t err;
} long_exec;

static void mark_started(void *user, const void *data, size_t size) {
   (void)data; (void)size;
   ((long_exec *)user)->started = 1;
}

static void *run_long(void *arg) {
   long_exec *l = arg;
   int32_t status = -1;
   l->rc = l->ssh->exec_bounded(l->c, l->command, NULL, 0, mark_started, NULL, l, 0, &l->cancel, &status, &l->err);
   l->finished = 1;
   return NULL;
}

/* Waits (at most 20 s) for *flag. */
static int wait_flag(volatile int *flag) {
   int i;
   for (i = 0; i < 400 && !*flag; i++) usleep(50000);
   return *flag;
}

static void *cancel_later(void *arg) {
   long_exec *l = arg;
   wait_flag(&l->started);
   termhost_ssh_cancel_request(&l->cancel);
   return NULL;
}

/* `tp reenter HOST`: a with_session body (on the connection's executor) calls exec on its own
 * connection, which would wait for itself; a debug build of the SSH plugin traps instead. */
typedef struct { const termhost_ssh_transport_t *ssh; termhost_ssh_connection_t *c; } reentry;

static termhost_status reenter_body(void *user, void *session, int socket, termhost_error_t *err) {
   reentry *r = user;
   int32_t status = -1;
   (void)session; (void)socket;
   return r->ssh->exec(r->c, "true", NULL, 0, NULL, NULL, NULL, &status, err);
}

static int32_t bounded(const termhost_command_invocation_t *inv, const termhost_ssh_transport_t *ssh) {
   termhost_ssh_connection_t *c = NULL;
   termhost_error_t err;
   int32_t status = -1;
   int out = inv->stdout_fd;
   const char *mode = inv->argv[0];
   pthread_t thread;
   if (!TERMHOST_HAS_FIELD(ssh, termhost_ssh_transport_t, exec_bounded) || !ssh->exec_bounded) {
      dprintf(out, "no exec_bounded\n");
      return 1;
   }
   if (ssh->open(H, inv->scene, inv->argv[1], &c, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "%s\n", err.message);
      return 255;
   }
   if (strcmp(mode, "reenter") == 0) {
      reentry r = { ssh, c };
      dprintf(out, "reenter: %d\n", (int)ssh->with_session(c, reenter_body, &r, &err));
   } else if (strcmp(mode, "deadline") == 0) {
      termhost_status rc = ssh->exec_bounded(c, "sleep 30", NULL, 0, NULL, NULL, NULL, 1000, NULL, &status, &err);
      dprintf(out, "deadline: %d %s\n", (int)rc, err.message);
      rc = ssh->exec_bounded(c, "echo after", NULL, 0, print, NULL, &out, 5000, NULL, &status, &err);
      dprintf(out, "then: %d status %d\n", (int)rc, (int)status);
      rc = ssh->exec_bounded(c, "true", NULL, 0, NULL, NULL, NULL, 86400001, NULL, &status, &err);
      dprintf(out, "too long: %d %s\n", (int)rc, err.message);
   } else if (strcmp(mode, "status") == 0 && inv->argc == 3) {
      /* The exit status exec_bounded reports, after the command's output (both streams). */
      termhost_status rc = ssh->exec_bounded(c, inv->argv[2], NULL, 0, print, print, &out, 20000, NULL, &status, &err);
      dprintf(out, "status: %d exit %d\n", (int)rc, (int)status);
   } else if (strcmp(mode, "cancel") == 0 && inv->argc == 3) {
      /* A second thread cancels once the command has spoken; the first is blocked in the call. */
      long_exec l = { ssh, c, inv->argv[2], 0, 0, 0, -1, { 0, "" } };
      pthread_create(&thread, NULL, cancel_later, &l);
      run_long(&l);
      pthread_join(thread, NULL);
      dprintf(out, "cancel: %d %s\n", (int)l.rc, l.err.message);
   } else if (strcmp(mode, "parallel") == 0) {
      long_exec l = { ssh, c, "echo started; sleep 30", 0, 0, 0, -1, { 0, "" } };
      termhost_status rc;
      pthread_create(&thread, NULL, run_long, &l);
      dprintf(out, "long started: %d\n", wait_flag(&l.started));
      /* The old exec, on the same connection, while the long one runs. */
      rc = ssh->exec(c, "echo short", NULL, 0, print, NULL, &out, &status, &err);
      dprintf(out, "short: %d status %d\n", (int)rc, (int)status);
      dprintf(out, "long still running: %d\n", !l.finished);
      termhost_ssh_cancel_request(&l.cancel);
      pthread_join(thread, NULL);
      dprintf(out, "long: %d\n", (int)l.rc);
   }
   ssh->close(c);
   return 0;
}

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_ssh_transport_t *ssh = H->get_service(H, TERMHOST_SSH_TRANSPORT);
   termhost_ssh_connection_t *c = NULL;
   termhost_error_t err;
   int32_t status = -1;
   int out = inv->stdout_fd;
   termhost_status rc;
   (void)f;
   if (ssh && inv->argc >= 2 && (strcmp(inv->argv[0], "tcp") == 0 || strcmp(inv->argv[0], "shell") == 0 ||
                                 strcmp(inv->argv[0], "listen") == 0 || strcmp(inv->argv[0], "splice") == 0))
      return channels(inv, ssh);
   if (ssh && inv->argc >= 2 && (strcmp(inv->argv[0], "deadline") == 0 || strcmp(inv->argv[0], "cancel") == 0 ||
                                 strcmp(inv->argv[0], "parallel") == 0 || strcmp(inv->argv[0], "reenter") == 0 ||
                                 strcmp(inv->argv[0], "status") == 0))
      return bounded(inv, ssh);
   if (!ssh || inv->argc != 1) return 2;
   /* The caller is checked, never trusted: NULL is refused, not dereferenced. */
   rc = ssh->open(NULL, inv->scene, inv->argv[0], &c, &err);
   dprintf(out, "null caller: %d\n", (int)rc);
   rc = ssh->open(H, inv->scene, inv->argv[0], &c, &err);
   dprintf(out, "open: %d\n", (int)rc);
   if (rc != TERMHOST_OK) {
      dprintf(out, "message: %.60s\n", err.message);
      return 1;
   }
   rc = ssh->exec(c, "echo one", NULL, 0, print, NULL, &out, &status, &err);
   dprintf(out, "exec: %d status %d\n", (int)rc, (int)status);
   ssh->close(c);
   rc = ssh->exec(c, "echo two", NULL, 0, print, NULL, &out, &status, &err);
   dprintf(out, "stale: %d %s\n", (int)rc, err.message);
   ssh->close(c);   /* closing twice is harmless */
   return 0;
}

static const char *const required[] = { TERMHOST_SSH_TRANSPORT, NULL };
static const termhost_command_descriptor_t cmd = { sizeof(termhost_command_descriptor_t), "tp", "transport probe", NULL };
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t desc = {
   sizeof(termhost_feature_descriptor_t), "org.test.transport", "1.0.0", "Transport probe", NULL, 1000,
   TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, required, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t inst = { sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run };
static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) { (void)x; return i ? NULL : &desc; }
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s, termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   return (termhost_feature_t *)&inst;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; H = host; return true; }
static void deinit(void) { H = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) ? NULL : &factory; }
static const termhost_plugin_entry_t entry = { TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.transport", "1.0.0", init, deinit, get_factory };
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
