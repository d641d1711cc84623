/* A C plugin that reads the Metrics plugin's snapshot service (org.termhost.metrics.snapshot/1)
 * from the header alone, as the assistant's get_metrics tool will.
 *
 *   termhost snapcheck HOST   runs `metrics show HOST` in this process (so a sampler exists),
 *                             then prints "HOSTS <json>", "SNAPSHOT <json>" and the answer
 *                             for a host without a sampler ("MISSING <code> <message>"). */
#include <stdio.h>
#include <string.h>
#include <termhost/termhost.h>

static const termhost_host_t *g_host;

struct out { int fd; const char *label; };

static void print_value(void *user, const void *data, size_t size) {
   const struct out *o = user;
   dprintf(o->fd, "%s %.*s\n", o->label, (int)size, (const char *)data);
}

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_host_commands_t *commands = g_host->get_service(g_host, TERMHOST_SERVICE_COMMANDS);
   const termhost_metrics_snapshot_t *metrics = g_host->get_service(g_host, TERMHOST_METRICS_SNAPSHOT);
   const char *show[3];
   termhost_error_t err;
   int32_t status = 0;
   struct out hosts = { 0, "HOSTS" }, snap = { 0, "SNAPSHOT" };
   (void)f;
   if (inv->argc != 1 || !commands) return 2;
   if (!metrics || metrics->struct_size < sizeof(termhost_metrics_snapshot_t)) {
      dprintf(inv->stderr_fd, "snapcheck: no metrics snapshot service\n");
      return 1;
   }
   show[0] = "metrics"; show[1] = "show"; show[2] = inv->argv[0];
   if (commands->run(g_host, inv->scene, 3, show, &status, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "snapcheck: %s\n", err.message);
      return 1;
   }
   hosts.fd = snap.fd = inv->stdout_fd;
   if (metrics->list_hosts(print_value, &hosts, &err) != TERMHOST_OK) return 1;
   if (metrics->get_snapshot(inv->argv[0], print_value, &snap, &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "snapcheck: %s\n", err.message);
      return 1;
   }
   if (metrics->get_snapshot("no-such-host", print_value, &snap, &err) == TERMHOST_OK) return 1;
   dprintf(inv->stdout_fd, "MISSING %d %s\n", (int)err.code, err.message);
   return status;
}

static const char *const required[] = { TERMHOST_METRICS_SNAPSHOT, TERMHOST_SERVICE_COMMANDS, NULL };
static const termhost_command_descriptor_t cmd = {
   sizeof(termhost_command_descriptor_t), "snapcheck", "read a metrics snapshot", "usage: termhost snapcheck HOST"
};
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t descriptor = {
   sizeof(termhost_feature_descriptor_t), "org.test.snapcheck", "1.0.0", "Snapshot check", NULL, 1000,
   TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, required, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run
};
static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 1; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) {
   (void)x;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s,
                                  termhost_error_t *e) {
   (void)x; (void)id; (void)s; (void)e;
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; g_host = host; return true; }
static void deinit(void) { g_host = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL; }
static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.snapcheck", "1.0.0", init, deinit, get_factory
};
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
