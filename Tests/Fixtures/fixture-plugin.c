/* A configurable C plugin for the loader, runtime and lifecycle tests. Each behaviour is
 * switched on with -D at build time (see Tests/TestSupport/Fixtures.swift); the defaults make
 * a well-behaved plugin with one feature and one command. Lifecycle callbacks are appended to
 * the file named by $TERMHOST_FIXTURE_LOG so tests can check order and counts. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <termhost/termhost.h>

#ifndef PLUGIN_ID
#define PLUGIN_ID "org.test.fixture"
#endif
#ifndef PLUGIN_VERSION
#define PLUGIN_VERSION "1.0.0"
#endif
#ifndef FEATURE_ID
#define FEATURE_ID PLUGIN_ID
#endif
#ifndef FEATURE_ORDER
#define FEATURE_ORDER 100
#endif
#ifndef FEATURE_SCOPE
#define FEATURE_SCOPE TERMHOST_SCOPE_PROCESS
#endif
#ifndef COMMAND_NAME
#define COMMAND_NAME "fixture"
#endif
#ifndef ABI_MAJOR
#define ABI_MAJOR TERMHOST_ABI_MAJOR
#endif
#ifndef ABI_MINOR
#define ABI_MINOR TERMHOST_ABI_MINOR
#endif
#ifndef ENTRY_NAME
#define ENTRY_NAME termhost_plugin_entry
#endif

#ifdef CRASH_IN_CONSTRUCTOR
/* A real invalid write, not raise(): a signal handler that returns would let raise() go on. */
static void crash(void) { *(volatile int *)(uintptr_t)16 = 1; }
__attribute__((constructor)) static void crash_on_load(void) { crash(); }
#endif

#ifdef FORK_IN_CONSTRUCTOR
/* A constructor that forks and lets both copies go on: each would run the host's code. */
__attribute__((constructor)) static void fork_on_load(void) { (void)fork(); }
#endif

#ifdef LINGER_IN_CONSTRUCTOR
/* A constructor that leaves a background process behind, holding every descriptor it
 * inherited (the probe's report pipe among them) for a long time. */
__attribute__((constructor)) static void linger_on_load(void) {
   if (fork() == 0) {
      sleep(60);
      _exit(0);
   }
}
#endif

static const termhost_host_t *g_host;

/* Where lifecycle notes go: the feature's "log" setting (tests that load plugins into their
 * own process use it, so that concurrent tests never share an environment variable), else
 * $TERMHOST_FIXTURE_LOG (tests that run the termhost binary). */
static int log_path(char *path, size_t size) {
   const termhost_host_config_t *config = g_host ? g_host->get_service(g_host, TERMHOST_SERVICE_CONFIG) : NULL;
   termhost_error_t err;
   char json[512];
   const char *env;
   if (config && config->get_setting(g_host, FEATURE_ID, "log", json, sizeof json, NULL, &err) == TERMHOST_OK
       && json[0] == '"' && strlen(json) >= 2) {
      json[strlen(json) - 1] = '\0';
      snprintf(path, size, "%s", json + 1);
      return 1;
   }
   env = getenv("TERMHOST_FIXTURE_LOG");
   if (!env) return 0;
   snprintf(path, size, "%s", env);
   return 1;
}

static void note(const char *what) {
   char path[512];
   FILE *f;
   if (!log_path(path, sizeof path)) return;
   f = fopen(path, "a");
   if (!f) return;
   fprintf(f, "%s %s\n", what, FEATURE_ID);
   fclose(f);
}

#ifdef FEATURE_AFTER
static const char *const after_list[] = { FEATURE_AFTER, NULL };
#define AFTER after_list
#else
#define AFTER NULL
#endif
#ifdef FEATURE_REQUIRES
static const char *const requires_list[] = { FEATURE_REQUIRES, NULL };
#define REQUIRES requires_list
#else
#define REQUIRES NULL
#endif
#ifdef REQUIRES_SERVICE
static const char *const services_list[] = { REQUIRES_SERVICE, NULL };
#define SERVICES services_list
#else
#define SERVICES NULL
#endif

#ifdef PROVIDES_SERVICE
/* A service this feature offers other plugins: one function returning 42. */
typedef struct fixture_service { uint32_t struct_size; int (*answer)(void); } fixture_service_t;
static int answer(void) { return 42; }
static const fixture_service_t service = { sizeof(fixture_service_t), answer };
static const void *f_get_service(const termhost_feature_t *f, const char *id) {
   (void)f;
   return strcmp(id, PROVIDES_SERVICE) == 0 ? &service : NULL;
}
static const char *const provides_list[] = { PROVIDES_SERVICE, NULL };
#define PROVIDES provides_list
#define GET_SERVICE f_get_service
#else
#define PROVIDES NULL
#define GET_SERVICE NULL
#endif

static const termhost_command_descriptor_t command = {
   sizeof(termhost_command_descriptor_t), COMMAND_NAME, "fixture command", NULL
};
static const termhost_command_descriptor_t *const commands[] = { &command, NULL };

#ifndef CONCURRENT_COMMANDS
#define CONCURRENT_COMMANDS 0
#endif
static const termhost_feature_descriptor_t descriptor = {
   sizeof(termhost_feature_descriptor_t), FEATURE_ID, PLUGIN_VERSION, "Fixture", NULL,
   FEATURE_ORDER, FEATURE_SCOPE, AFTER, NULL, REQUIRES, SERVICES, PROVIDES, commands, NULL, NULL, CONCURRENT_COMMANDS
};


static termhost_status f_activate(const termhost_feature_t *f, const termhost_scene_info_t *info,
                                  termhost_error_t *err) {
   (void)f; (void)info;
#ifdef CHECK_SERVICE
   note(g_host->get_service(g_host, CHECK_SERVICE) ? "service-available" : "service-missing");
#endif
#ifdef FAIL_ACTIVATE
   err->code = TERMHOST_ERR_IO;
   snprintf(err->message, sizeof err->message, "%s", FAIL_ACTIVATE);
   return TERMHOST_ERR_IO;
#else
   (void)err;
   note("activate");
   return TERMHOST_OK;
#endif
}
static void f_attached(const termhost_feature_t *f, const termhost_scene_info_t *i) { (void)f; (void)i; note("scene_attached"); }
static void f_detached(const termhost_feature_t *f, const termhost_scene_info_t *i) { (void)f; (void)i; note("scene_detached"); }
static void f_background(const termhost_feature_t *f) { (void)f; note("background"); }
static void f_foreground(const termhost_feature_t *f) { (void)f; note("foreground"); }
static void f_expire(const termhost_feature_t *f) { (void)f; note("expire"); }
static void f_shutdown(const termhost_feature_t *f) {
   (void)f;
   note("shutdown");
#ifdef HANG_IN_SHUTDOWN
   for (;;) sleep(1);
#endif
}
static void f_destroy(const termhost_feature_t *f) { (void)f; note("destroy"); }

static int32_t f_run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   int i;
   (void)f;
   dprintf(inv->stdout_fd, "%s ran with %d argument(s)", COMMAND_NAME, (int)inv->argc);
   for (i = 0; i < inv->argc; i++) dprintf(inv->stdout_fd, " [%s]", inv->argv[i]);
   dprintf(inv->stdout_fd, "\n");
#ifdef HANG_IN_COMMAND
   for (;;) sleep(1);
#endif
   /* A write whose reader is gone: the host must survive it, and the plugin hear EPIPE. */
   if (inv->argc > 0 && strcmp(inv->argv[0], "broken-pipe") == 0) {
      int p[2];
      ssize_t n;
      if (pipe(p) != 0) return 1;
      close(p[0]);
      n = write(p[1], "x", 1);
      dprintf(inv->stdout_fd, "write to a closed pipe: %s\n", n < 0 && errno == EPIPE ? "EPIPE" : "no error");
      close(p[1]);
      /* A program the plugin starts must get SIGPIPE's default back: it prints its own mask. */
      {
         pid_t child = fork();
         int status = 0;
         if (child == 0) {
            dup2(inv->stdout_fd, 1);
            execl("/bin/grep", "grep", "^SigIgn:", "/proc/self/status", (char *)NULL);
            _exit(127);
         }
         if (child < 0 || waitpid(child, &status, 0) != child) return 1;
      }
      return 0;
   }
   return inv->argc > 0 && strcmp(inv->argv[0], "fail") == 0 ? 1 : 0;
}

static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, f_activate, f_attached, f_detached, f_background,
   f_foreground, f_expire, f_shutdown, f_destroy, GET_SERVICE, f_run
};

static uint32_t fac_count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *fac_get(const termhost_feature_factory_t *x, uint32_t i) {
   (void)x;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *fac_create(const termhost_feature_factory_t *x, const char *id,
                                      const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)x; (void)info;
   if (strcmp(id, FEATURE_ID) != 0) {
      err->code = TERMHOST_ERR_NOT_FOUND;
      snprintf(err->message, sizeof err->message, "unknown feature %s", id);
      return NULL;
   }
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = {
   sizeof(termhost_feature_factory_t), fac_count, fac_get, fac_create
};

static bool p_init(const termhost_host_t *host, termhost_error_t *err) {
   g_host = host;
   note("init");
#ifdef CRASH_IN_INIT
   *(volatile int *)(uintptr_t)16 = 1;
#endif
#ifdef HANG_IN_INIT
   for (;;) sleep(1);
#endif
#ifdef SLOW_INIT_MS
   /* Slower than a tiny probe timeout, well within the default one. */
   {
      struct timespec t = { SLOW_INIT_MS / 1000, (SLOW_INIT_MS % 1000) * 1000000L };
      while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
   }
#endif
#ifdef FAIL_INIT
   err->code = TERMHOST_ERR_UNSUPPORTED;
   snprintf(err->message, sizeof err->message, "%s", FAIL_INIT);
   return false;
#else
   (void)err;
   return true;
#endif
}
static void p_deinit(void) { g_host = NULL; }
static const void *p_get_factory(const char *id) {
   return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL;
}

static const termhost_plugin_entry_t entry = {
   { ABI_MAJOR, ABI_MINOR, 0 }, sizeof(termhost_plugin_entry_t),
   PLUGIN_ID, PLUGIN_VERSION, p_init, p_deinit, p_get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *ENTRY_NAME(void) { return &entry; }

#ifdef EXTRA_EXPORT
/* A symbol a careless plugin leaks into the global namespace (no version script). */
int fixture_helper(void);
int fixture_helper(void) { return 42; }
#endif

#ifdef FAKE_SWIFT_TOOLCHAIN
/* Looks like a Swift image built by another toolchain: swiftc's .comment line, another commit. */
__asm__(".ident \"clang version 17.0.0 (https://github.com/swiftlang/llvm-project.git 0123456789abcdef0123)\"");
#endif
