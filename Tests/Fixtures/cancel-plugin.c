/* A C plugin for the cancellation, shutdown-blame and re-entrancy tests on the termhost binary
 * (Tests/CLITests/CancelEndToEndTests.swift). One feature, four commands, named
 * COMMAND_PREFIX + "-polite" and so on (several copies load side by side):
 *   polite          writes "started", waits for termhost.cancel/1 (a handler that writes to a
 *                   pipe, and the flag), cleans up (a little work), writes "cleaned-up", 130.
 *   stubborn        writes "started", notes "asked-to-stop" when cancelled, never returns.
 *   recurse [N]     prints "level N", runs itself with N+1 through termhost.commands/1; a
 *                   refusal is printed with its code and ends the chain with status 3.
 *   hang-shutdown   returns at once; this instance's shutdown() will then never return (only
 *                   in a process that ran the command, so the probe never sees the hang).
 * Every call the host makes is appended to $TERMHOST_CANCEL_LOG ("<what> <feature> <pid>": the
 * probe runs plugins in a process of its own), so the
 * tests can check that destroy() and deinit() come after run_command() returned; marker files
 * go to $TERMHOST_CANCEL_DIR. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <termhost/termhost.h>

#ifndef PLUGIN_ID
#define PLUGIN_ID "org.test.cancel"
#endif
#ifndef FEATURE_ORDER
#define FEATURE_ORDER 100
#endif
#ifndef COMMAND_PREFIX
#define COMMAND_PREFIX "c"
#endif

static const termhost_host_t *g_host;
static volatile int g_hang_in_shutdown;

static void note(const char *what) {
   const char *path = getenv("TERMHOST_CANCEL_LOG");
   int fd;
   if (!path) return;
   fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
   if (fd < 0) return;
   dprintf(fd, "%s %s %ld\n", what, PLUGIN_ID, (long)getpid());
   close(fd);
}

static void marker(const char *name) {
   const char *dir = getenv("TERMHOST_CANCEL_DIR");
   char path[1024];
   int fd;
   if (!dir) return;
   snprintf(path, sizeof path, "%s/%s", dir, name);
   fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
   if (fd >= 0) close(fd);
}

static void pause_ms(long ms) {
   struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
   while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

/* The handler: runs on a host thread; only wakes the command. */
static void wake(void *user, termhost_scene_id scene) {
   int fd = *(int *)user;
   (void)scene;
   if (write(fd, "x", 1) < 0) {}
}

static void heard(void *user, termhost_scene_id scene) {
   (void)user; (void)scene;
   note("asked-to-stop");
}

static int32_t polite(const termhost_command_invocation_t *inv) {
   const termhost_host_cancel_t *cancel = g_host->get_service(g_host, TERMHOST_SERVICE_CANCEL);
   termhost_error_t err;
   uint64_t token = 0;
   int p[2];
   if (!cancel) {
      note("no-cancel-service");
      marker("started");
      for (;;) pause_ms(1000);
   }
   if (pipe(p) != 0) return 1;
   if (cancel->on_cancel(g_host, inv->scene, wake, &p[1], &token, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "on_cancel: %s\n", err.message);
      return 1;
   }
   marker("started");
   while (!cancel->is_cancelled(g_host, inv->scene)) {
      struct pollfd pfd = { p[0], POLLIN, 0 };
      (void)poll(&pfd, 1, 1000);
   }
   cancel->remove(g_host, token);
   note("cancelled");
   pause_ms(300); /* the clean-up takes a while; the host must wait for it */
   marker("cleaned-up");
   close(p[0]);
   close(p[1]);
   note("run_command-returns");
   return 130;
}

static int32_t recurse(const termhost_command_invocation_t *inv) {
   const termhost_host_commands_t *commands = g_host->get_service(g_host, TERMHOST_SERVICE_COMMANDS);
   int level = inv->argc > 0 ? atoi(inv->argv[0]) : 1;
   char next[16];
   const char *argv[2];
   int32_t status = 0;
   termhost_status rc;
   termhost_error_t err;
   dprintf(inv->stdout_fd, "level %d\n", level);
   snprintf(next, sizeof next, "%d", level + 1);
   argv[0] = COMMAND_PREFIX "-recurse";
   argv[1] = next;
   rc = commands->run(g_host, inv->scene, 2, argv, &status, &err);
   if (rc != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "recurse: level %d: %s (code %d)\n", level, err.message, (int)rc);
      return 3;
   }
   return status;
}

static int32_t f_run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const char *name = inv->command;
   (void)f;
   if (strcmp(name, COMMAND_PREFIX "-recurse") == 0) return recurse(inv);
   note("run_command");
   if (strcmp(name, COMMAND_PREFIX "-polite") == 0) return polite(inv);
   if (strcmp(name, COMMAND_PREFIX "-stubborn") == 0) {
      /* Hears the request (so the tests know it arrived) and carries on regardless. */
      const termhost_host_cancel_t *cancel = g_host->get_service(g_host, TERMHOST_SERVICE_CANCEL);
      termhost_error_t err;
      uint64_t token;
      if (cancel) (void)cancel->on_cancel(g_host, inv->scene, heard, NULL, &token, &err);
      marker("started");
      for (;;) pause_ms(1000);
   }
   if (strcmp(name, COMMAND_PREFIX "-hang-shutdown") == 0) g_hang_in_shutdown = 1;
   return 0;
}

static termhost_status f_activate(const termhost_feature_t *f, const termhost_scene_info_t *i, termhost_error_t *e) {
   (void)f; (void)i; (void)e;
   return TERMHOST_OK;
}
static void f_shutdown(const termhost_feature_t *f) {
   (void)f;
   note("shutdown");
   while (g_hang_in_shutdown) pause_ms(1000);
}
static void f_destroy(const termhost_feature_t *f) { (void)f; note("destroy"); }

static const termhost_command_descriptor_t c_polite = { sizeof(termhost_command_descriptor_t), COMMAND_PREFIX "-polite", "stops when asked", NULL };
static const termhost_command_descriptor_t c_stubborn = { sizeof(termhost_command_descriptor_t), COMMAND_PREFIX "-stubborn", "never stops", NULL };
static const termhost_command_descriptor_t c_recurse = { sizeof(termhost_command_descriptor_t), COMMAND_PREFIX "-recurse", "runs itself", NULL };
static const termhost_command_descriptor_t c_hang = { sizeof(termhost_command_descriptor_t), COMMAND_PREFIX "-hang-shutdown", "hangs in shutdown", NULL };
static const termhost_command_descriptor_t *const commands[] = { &c_polite, &c_stubborn, &c_recurse, &c_hang, NULL };

static const termhost_feature_descriptor_t descriptor = {
   sizeof(termhost_feature_descriptor_t), PLUGIN_ID, "1.0.0", "Cancel fixture", NULL,
   FEATURE_ORDER, TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, NULL, commands, NULL, NULL, 0 /* concurrent_commands */
};

static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, f_activate, NULL, NULL, NULL,
   NULL, NULL, f_shutdown, f_destroy, NULL, f_run
};

static uint32_t fac_count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *fac_get(const termhost_feature_factory_t *x, uint32_t i) {
   (void)x;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *fac_create(const termhost_feature_factory_t *x, const char *id,
                                      const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)x; (void)info; (void)id; (void)err;
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), fac_count, fac_get, fac_create };

static bool p_init(const termhost_host_t *host, termhost_error_t *err) {
   (void)err;
   g_host = host;
   return true;
}
static void p_deinit(void) { note("deinit"); g_host = NULL; }
static const void *p_get_factory(const char *id) {
   return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL;
}

static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), PLUGIN_ID, "1.0.0", p_init, p_deinit, p_get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
