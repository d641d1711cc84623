/* A C plugin that hands the host bad values across the ABI, for Tests/LoaderTests and
 * Tests/CLITests (issue 13 §2): structs whose struct_size lies, and service calls with invalid
 * arguments. `termhost bnd <action>` makes one call and prints "ok ..." or
 * "error CODE: MESSAGE" (exit 1), so a test can check the host's answer word for word.
 *
 * Compile-time knobs (-D...):
 *   ENTRY_SIZE, FACTORY_SIZE, DESCRIPTOR_SIZE, COMMAND_SIZE, FEATURE_SIZE
 *       the struct_size to claim (default: the real sizeof)
 *   PLUGIN_ID, COMMAND_NAME   (defaults "org.test.boundary", "bnd")
 *   TERMHOST_ABI_MINOR_NEEDED the minor to declare (see version.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <termhost/termhost.h>

#ifndef PLUGIN_ID
#define PLUGIN_ID "org.test.boundary"
#endif
#ifndef COMMAND_NAME
#define COMMAND_NAME "bnd"
#endif
#ifndef ENTRY_SIZE
#define ENTRY_SIZE sizeof(termhost_plugin_entry_t)
#endif
#ifndef FACTORY_SIZE
#define FACTORY_SIZE sizeof(termhost_feature_factory_t)
#endif
#ifndef DESCRIPTOR_SIZE
#define DESCRIPTOR_SIZE sizeof(termhost_feature_descriptor_t)
#endif
#ifndef COMMAND_SIZE
#define COMMAND_SIZE sizeof(termhost_command_descriptor_t)
#endif
#ifndef FEATURE_SIZE
#define FEATURE_SIZE sizeof(termhost_feature_t)
#endif

static const termhost_host_t *H;

static void print_sink(void *user, const void *data, size_t size) {
   dprintf(*(int *)user, "value %.*s\n", (int)size, (const char *)data);
}

static void on_event(void *user, const char *topic, const char *payload) { (void)user; (void)topic; (void)payload; }

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_host_store_t *store = H->get_service(H, TERMHOST_SERVICE_STORE);
   const termhost_host_secrets_t *secrets = H->get_service(H, TERMHOST_SERVICE_SECRETS);
   const termhost_host_config_t *config = H->get_service(H, TERMHOST_SERVICE_CONFIG);
   const termhost_host_events_t *events = H->get_service(H, TERMHOST_SERVICE_EVENTS);
   const termhost_host_commands_t *commands = H->get_service(H, TERMHOST_SERVICE_COMMANDS);
   termhost_error_t err;
   termhost_status rc = TERMHOST_OK;
   int out = inv->stdout_fd;
   const char *action = inv->argc > 0 ? inv->argv[0] : "";
   (void)f;
   memset(&err, 0, sizeof err);

   if (strcmp(action, "ok") == 0) {
      /* Arguments exactly as received, and whether the host was asked for JSON. */
      int i;
      dprintf(out, "ok json=%d args=%d", (int)inv->json_output, (int)inv->argc - 1);
      for (i = 1; i < inv->argc; i++) dprintf(out, " [%s]", inv->argv[i]);
      dprintf(out, "\n");
      return 0;
   } else if (strcmp(action, "store-keys") == 0) {
      /* Two different keys that are not UTF-8: today both become "k\uFFFD" and collide. */
      rc = store->put(H, "c", "k\xff", "first", 5, &err);
      if (rc == TERMHOST_OK) rc = store->put(H, "c", "k\xfe", "second", 6, &err);
      if (rc == TERMHOST_OK) rc = store->get(H, "c", "k\xff", print_sink, &out, &err);
   } else if (strcmp(action, "store-collection") == 0) {
      rc = store->get(H, "c\xc3", "k", print_sink, &out, &err);
   } else if (strcmp(action, "store-null-value") == 0) {
      rc = store->put(H, "c", "k", NULL, 5, &err);
      if (rc == TERMHOST_OK) rc = store->get(H, "c", "k", print_sink, &out, &err);
   } else if (strcmp(action, "secret-id") == 0) {
      rc = secrets->get(H, "id\xff", print_sink, &out, &err);
   } else if (strcmp(action, "secret-null-value") == 0) {
      char id[TERMHOST_SECRET_ID_SIZE];
      rc = secrets->put(H, NULL, 16, id, &err);
      if (rc == TERMHOST_OK) dprintf(out, "stored %s\n", id);
   } else if (strcmp(action, "publish-not-json") == 0) {
      rc = events->publish(H, "org.test.boundary.note", "{not json", &err);
   } else if (strcmp(action, "publish-topic") == 0) {
      rc = events->publish(H, inv->argc > 1 ? inv->argv[1] : "", "{}", &err);
   } else if (strcmp(action, "publish-long-topic") == 0) {
      char topic[202];
      memset(topic, 'a', 201);
      topic[201] = 0;
      rc = events->publish(H, topic, "{}", &err);
   } else if (strcmp(action, "subscribe-topic") == 0) {
      uint64_t token = 0;
      rc = events->subscribe(H, "Org.Test", on_event, NULL, &token, &err);
   } else if (strcmp(action, "setting-null-key") == 0) {
      char buf[64];
      rc = config->get_setting(H, PLUGIN_ID, NULL, buf, sizeof buf, NULL, &err);
   } else if (strcmp(action, "run-null-arg") == 0) {
      const char *argv[] = { COMMAND_NAME, "ok", NULL };
      int32_t status = -1;
      rc = commands->run(H, inv->scene, 3, argv, &status, &err);
      if (rc == TERMHOST_OK) dprintf(out, "status %d\n", (int)status);
   } else {
      dprintf(inv->stderr_fd, "usage: termhost " COMMAND_NAME " <action>\n");
      return 2;
   }
   if (rc != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "error %d: %s\n", (int)rc, err.message);
      return 1;
   }
   dprintf(out, "ok\n");
   return 0;
}

static const termhost_command_descriptor_t cmd = { COMMAND_SIZE, COMMAND_NAME, "hand the host bad values", NULL };
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t desc = {
   DESCRIPTOR_SIZE, PLUGIN_ID, "1.0.0", "Boundary", NULL, 100,
   TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t inst = {
   FEATURE_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run
};
static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) { (void)x; return i ? NULL : &desc; }
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s, termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   return (termhost_feature_t *)&inst;
}
static const termhost_feature_factory_t factory = { FACTORY_SIZE, count, get, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; H = host; return true; }
static void deinit(void) { H = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) ? NULL : &factory; }
static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, ENTRY_SIZE, PLUGIN_ID, "1.0.0", init, deinit, get_factory
};
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
