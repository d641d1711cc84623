/* A C plugin whose command `svc <action> [args]` exercises one host service through the C ABI
 * and prints what came back, so the end-to-end tests can check every vtable as a third-party
 * C author would use it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <termhost/termhost.h>

#define FEATURE_ID "org.test.services"

static const termhost_host_t *H;

static void print_sink(void *user, const void *data, size_t size) {
   dprintf(*(int *)user, "%.*s\n", (int)size, (const char *)data);
}

static int32_t visit_entry(void *user, const char *key, const void *value, size_t size) {
   dprintf(*(int *)user, "%s=%.*s\n", key, (int)size, (const char *)value);
   return 0;
}

static int32_t visit_journal(void *user, int64_t seq, const char *ns, const char *coll, const char *key, const char *op) {
   dprintf(*(int *)user, "%lld %s %s %s %s\n", (long long)seq, ns, coll, key, op);
   return 0;
}

static int32_t visit_command(void *user, const char *name, const char *summary, const char *feature) {
   (void)summary;
   dprintf(*(int *)user, "%s (%s)\n", name, feature);
   return 0;
}

static void on_event(void *user, const char *topic, const char *payload) {
   dprintf(*(int *)user, "event %s %s\n", topic, payload);
}

static termhost_status failing_body(void *user, termhost_error_t *err) {
   const termhost_host_store_t *store = user;
   store->put(H, "tx", "inside", "1", 1, err);
   err->code = TERMHOST_ERR_CANCELLED;
   snprintf(err->message, sizeof err->message, "body gave up");
   return TERMHOST_ERR_CANCELLED;
}

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_host_store_t *store = H->get_service(H, TERMHOST_SERVICE_STORE);
   const termhost_host_secrets_t *secrets = H->get_service(H, TERMHOST_SERVICE_SECRETS);
   const termhost_host_config_t *config = H->get_service(H, TERMHOST_SERVICE_CONFIG);
   const termhost_host_interact_t *interact = H->get_service(H, TERMHOST_SERVICE_INTERACT);
   const termhost_host_events_t *events = H->get_service(H, TERMHOST_SERVICE_EVENTS);
   const termhost_host_commands_t *commands = H->get_service(H, TERMHOST_SERVICE_COMMANDS);
   const termhost_host_log_t *log = H->get_service(H, TERMHOST_SERVICE_LOG);
   termhost_error_t err;
   termhost_status rc = TERMHOST_OK;
   int out = inv->stdout_fd;
   const char *action = inv->argc > 0 ? inv->argv[0] : "";
   const char *arg = inv->argc > 1 ? inv->argv[1] : "";
   (void)f;
   memset(&err, 0, sizeof err);

   if (strcmp(action, "secret-put") == 0) {
      char id[TERMHOST_SECRET_ID_SIZE];
      rc = secrets->put(H, arg, strlen(arg), id, &err);
      if (rc == TERMHOST_OK) dprintf(out, "%s\n", id);
   } else if (strcmp(action, "secret-get") == 0) {
      rc = secrets->get(H, arg, print_sink, &out, &err);
   } else if (strcmp(action, "secret-rm") == 0) {
      rc = secrets->remove(H, arg, &err);
   } else if (strcmp(action, "setting") == 0) {
      char buf[8];
      size_t needed = 0;
      rc = config->get_setting(H, FEATURE_ID, arg, buf, sizeof buf, &needed, &err);
      if (rc == TERMHOST_ERR_TOO_LARGE) {
         char *big = malloc(needed);
         rc = config->get_setting(H, FEATURE_ID, arg, big, needed, NULL, &err);
         if (rc == TERMHOST_OK) dprintf(out, "%s (needed %zu bytes)\n", big, needed);
         free(big);
      } else if (rc == TERMHOST_OK) {
         dprintf(out, "%s\n", buf);
      }
   } else if (strcmp(action, "prompt") == 0) {
      char answer[64];
      rc = interact->prompt_text(H, inv->scene, "Passphrase: ", 0, answer, sizeof answer, &err);
      if (rc == TERMHOST_OK) dprintf(out, "got %zu characters\n", strlen(answer));
   } else if (strcmp(action, "confirm") == 0) {
      int32_t yes = 0;
      rc = interact->confirm(H, inv->scene, "Trust this host?", &yes, &err);
      if (rc == TERMHOST_OK) dprintf(out, "%s\n", yes ? "yes" : "no");
   } else if (strcmp(action, "events") == 0) {
      uint64_t token = 0;
      rc = events->subscribe(H, "org.test.ping", on_event, &out, &token, &err);
      if (rc == TERMHOST_OK) rc = events->publish(H, "org.test.ping", "{\"n\":1}", &err);
      events->unsubscribe(H, token);
      if (rc == TERMHOST_OK) rc = events->publish(H, "org.test.ping", "{\"n\":2}", &err);
   } else if (strcmp(action, "commands") == 0) {
      commands->list(H, visit_command, &out);
   } else if (strcmp(action, "run") == 0) {
      int32_t status = -1;
      rc = commands->run(H, inv->scene, inv->argc - 1, inv->argv + 1, &status, &err);
      if (rc == TERMHOST_OK) dprintf(out, "status %d\n", (int)status);
   } else if (strcmp(action, "store") == 0) {
      store->put(H, "c", "b", "2", 1, &err);
      store->put(H, "c", "a", "1", 1, &err);
      store->remove(H, "c", "b", &err);
      rc = store->list(H, "c", "", visit_entry, &out, &err);
      if (rc == TERMHOST_OK) rc = store->journal_since(H, 0, visit_journal, &out, &err);
   } else if (strcmp(action, "transaction") == 0) {
      rc = store->transaction(H, failing_body, (void *)store, &err);
      dprintf(out, "transaction: %d %s\n", (int)rc, err.message);
      memset(&err, 0, sizeof err);
      rc = store->get(H, "tx", "inside", print_sink, &out, &err);
   } else if (strcmp(action, "log") == 0) {
      log->log(H, TERMHOST_LOG_WARNING, arg);
   } else {
      dprintf(inv->stderr_fd, "usage: termhost svc <action> [arg]\n");
      return 2;
   }
   if (rc != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "error %d: %s\n", (int)rc, err.message);
      return 1;
   }
   return 0;
}

static const termhost_command_descriptor_t cmd = { sizeof(termhost_command_descriptor_t), "svc", "exercise host services", NULL };
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t desc = {
   sizeof(termhost_feature_descriptor_t), FEATURE_ID, "1.0.0", "Services", NULL, 10,
   TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */
};
static const termhost_feature_t inst = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, run
};
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
static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.services", "1.0.0", init, deinit, get_factory
};
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
