/* A C plugin that crashes after the probe's old stages (dlopen, init, factory, deinit) have
 * passed, for the crash-containment tests (Tests/CLITests/CrashContainmentTests.swift):
 *   -DCRASH_IN_CREATE    the factory's create() writes through a bad pointer
 *   -DCRASH_IN_ACTIVATE  activate() does
 *   -DCRASH_IN_COMMAND   the command does (create and activate are fine, so only the host's
 *                        fatal-signal recorder can name it)
 *   -DABORT_IN_COMMAND   the command calls abort() (SIGABRT, the way a failed assert ends)
 *   -DCRASH_IN_THREAD    the command starts a thread of its own that writes through a bad
 *                        pointer (no host call on that thread: found by the code's address)
 * Built with PLUGIN_ID, FEATURE_ID and COMMAND_NAME like Tests/Fixtures/fixture-plugin.c. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termhost/termhost.h>

#ifndef PLUGIN_ID
#define PLUGIN_ID "org.test.crashy"
#endif
#ifndef PLUGIN_VERSION
#define PLUGIN_VERSION "1.0.0"
#endif
#ifndef FEATURE_ID
#define FEATURE_ID PLUGIN_ID
#endif
#ifndef COMMAND_NAME
#define COMMAND_NAME "crashy"
#endif

#if defined(CRASH_IN_CREATE) || defined(CRASH_IN_ACTIVATE) || defined(CRASH_IN_COMMAND) || defined(CRASH_IN_THREAD)
static void crash(void) { *(volatile int *)(uintptr_t)16 = 1; }
#endif

static const termhost_command_descriptor_t command = {
   sizeof(termhost_command_descriptor_t), COMMAND_NAME, "crash-containment fixture command", NULL
};
static const termhost_command_descriptor_t *const commands[] = { &command, NULL };
static const termhost_feature_descriptor_t descriptor = {
   sizeof(termhost_feature_descriptor_t), FEATURE_ID, PLUGIN_VERSION, "Crashy", NULL,
   100, TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, NULL, commands, NULL, NULL, 0 /* concurrent_commands */
};

static termhost_status f_activate(const termhost_feature_t *f, const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)f; (void)info; (void)err;
#ifdef CRASH_IN_ACTIVATE
   crash();
#endif
   return TERMHOST_OK;
}

#ifdef CRASH_IN_THREAD
static void *crasher(void *arg) { (void)arg; crash(); return NULL; }
#endif

static int32_t f_run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   (void)f;
   dprintf(inv->stdout_fd, "%s running\n", COMMAND_NAME);
#ifdef CRASH_IN_COMMAND
   crash();
#endif
#ifdef ABORT_IN_COMMAND
   abort();
#endif
#ifdef CRASH_IN_THREAD
   {
      pthread_t t;
      if (pthread_create(&t, NULL, crasher, NULL) == 0) pthread_join(t, NULL);
   }
#endif
   return 0;
}

static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, f_activate, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, f_run
};

static uint32_t fac_count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *fac_get(const termhost_feature_factory_t *x, uint32_t i) {
   (void)x;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *fac_create(const termhost_feature_factory_t *x, const char *id,
                                      const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)x; (void)info; (void)id; (void)err;
#ifdef CRASH_IN_CREATE
   crash();
#endif
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), fac_count, fac_get, fac_create };

static bool p_init(const termhost_host_t *host, termhost_error_t *err) { (void)host; (void)err; return true; }
static void p_deinit(void) {}
static const void *p_get_factory(const char *id) {
   return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL;
}
static const termhost_plugin_entry_t entry = {
   { TERMHOST_ABI_MAJOR, TERMHOST_ABI_MINOR, 0 }, sizeof(termhost_plugin_entry_t),
   PLUGIN_ID, PLUGIN_VERSION, p_init, p_deinit, p_get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
