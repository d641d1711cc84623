/* A C plugin for the sync-store tests (Tests/CLITests/SyncStoreEndToEndTests.swift).
 * init() declares collection "notes" syncable (field-wise, "last_used" device-local) and
 * collection "bad" with a device-local field on a whole-record merge (refused: the outcome is
 * kept for the command to print). Command COMMAND_NAME (default "syncstore"):
 *   seed           puts notes/n1, private/p1 and a secret "canary-<pid>"; prints the secret's ID
 *   read NS        prints what termhost.sync-store/1 gives this plugin: the syncable
 *                  collections, NS's notes/n1, NS's private/p1 (not syncable), and the
 *                  journal rows of syncable collections; every failure as "<call>: <code> <msg>"
 *   apply NS VAL   applies VAL to NS's notes/n1 through the sync store; prints the status
 *   check NS VAL   runs the owner's check (ABI 1.4) of NS's notes on VAL as notes/n1; prints the status
 * init() also names a check for "notes" (a note may not say "forbidden"; its reason carries an
 * escape sequence the host must make visible) and tries one for "private" (not syncable: refused,
 * printed by seed).
 *   own            prints what termhost.store/1's journal_since gives this plugin */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <termhost/termhost.h>

#ifndef PLUGIN_ID
#define PLUGIN_ID "org.test.syncstore"
#endif
#ifndef COMMAND_NAME
#define COMMAND_NAME "syncstore"
#endif

static const termhost_host_t *g_host;
static termhost_status g_bad_declaration;
static char g_bad_message[TERMHOST_MESSAGE_SIZE];
static termhost_status g_private_check;
static char g_private_check_message[TERMHOST_MESSAGE_SIZE];

/* The owner's check of another device's note: any thread, no call back into the host. */
static int32_t check_note(void *user, const char *collection, const char *key, const void *value, size_t size,
                          char *reason, size_t reason_size) {
   static const char word[] = "forbidden";
   size_t i;
   (void)user; (void)collection; (void)key;
   for (i = 0; i + sizeof word - 1 <= size; i++) {
      if (memcmp((const char *)value + i, word, sizeof word - 1) == 0) {
         snprintf(reason, reason_size, "text: a note may not say forbidden\033[2J");
         return 1;
      }
   }
   return 0;
}

static const termhost_command_descriptor_t command = {
   sizeof(termhost_command_descriptor_t), COMMAND_NAME, "sync-store fixture", "usage: termhost syncstore seed|read NS|apply NS VALUE|own"
};
static const termhost_command_descriptor_t *const commands[] = { &command, NULL };

static const termhost_feature_descriptor_t descriptor = {
   .struct_size = sizeof(termhost_feature_descriptor_t),
   .id = PLUGIN_ID, .version = "1.0.0", .display_name = "Sync store fixture",
   .order = 100, .scope = TERMHOST_SCOPE_PROCESS, .commands = commands
};

static void print_sink(void *user, const void *data, size_t size) {
   FILE *out = user;
   fprintf(out, "%.*s", (int)size, (const char *)data);
}

static int32_t print_collection(void *user, const char *ns, const char *collection, int32_t merge, const char *local) {
   fprintf(user, "collection %s/%s merge %d local [%s]\n", ns, collection, (int)merge, local);
   return 0;
}

static int32_t print_row(void *user, int64_t seq, const char *ns, const char *collection, const char *key, const char *op) {
   (void)seq;
   fprintf(user, "journal %s/%s/%s %s\n", ns, collection, key, op);
   return 0;
}

static void report(FILE *out, const char *call, termhost_status rc, const termhost_error_t *err) {
   if (rc == TERMHOST_OK) fprintf(out, "%s: ok\n", call);
   else fprintf(out, "%s: %d %s\n", call, (int)rc, err->message);
}

static int32_t run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const termhost_host_sync_store_t *sync = g_host->get_service(g_host, TERMHOST_SERVICE_SYNC_STORE);
   const termhost_host_store_t *store = g_host->get_service(g_host, TERMHOST_SERVICE_STORE);
   const termhost_host_secrets_t *secrets = g_host->get_service(g_host, TERMHOST_SERVICE_SECRETS);
   termhost_error_t err;
   termhost_status rc;
   FILE *out = fdopen(dup(inv->stdout_fd), "w");
   (void)f;
   if (!out) return 1;
   if (inv->argc >= 1 && strcmp(inv->argv[0], "seed") == 0) {
      char secret[64], id[TERMHOST_SECRET_ID_SIZE];
      snprintf(secret, sizeof secret, "canary-%ld", (long)getpid());
      rc = store->put(g_host, "notes", "n1", "{\"text\":\"hi\",\"last_used\":\"here\"}", 32, &err);
      report(out, "put notes", rc, &err);
      rc = store->put(g_host, "private", "p1", "private", 7, &err);
      report(out, "put private", rc, &err);
      rc = secrets->put(g_host, secret, strlen(secret), id, &err);
      report(out, "put secret", rc, &err);
      fprintf(out, "secret %s\n", secret);
      fprintf(out, "declare bad: %d %s\n", (int)g_bad_declaration, g_bad_message);
      fprintf(out, "check private: %d %s\n", (int)g_private_check, g_private_check_message);
   } else if (inv->argc == 2 && strcmp(inv->argv[0], "read") == 0) {
      const char *ns = inv->argv[1];
      if (!sync) { fprintf(out, "no sync-store service\n"); fclose(out); return 1; }
      rc = sync->collections(g_host, print_collection, out, &err);
      report(out, "collections", rc, &err);
      rc = sync->get(g_host, ns, "notes", "n1", print_sink, out, &err);
      if (rc == TERMHOST_OK) fprintf(out, "\n");
      report(out, "get notes", rc, &err);
      rc = sync->get(g_host, ns, "private", "p1", print_sink, out, &err);
      report(out, "get private", rc, &err);
      rc = sync->journal_since(g_host, 0, print_row, out, &err);
      report(out, "journal", rc, &err);
   } else if (inv->argc == 3 && strcmp(inv->argv[0], "apply") == 0) {
      rc = sync->apply(g_host, inv->argv[1], "notes", "n1", inv->argv[2], strlen(inv->argv[2]), &err);
      report(out, "apply", rc, &err);
   } else if (inv->argc == 3 && strcmp(inv->argv[0], "check") == 0) {
      if (!TERMHOST_HAS_FIELD(sync, termhost_host_sync_store_t, check)) { fprintf(out, "no check\n"); fclose(out); return 1; }
      rc = sync->check(g_host, inv->argv[1], "notes", "n1", inv->argv[2], strlen(inv->argv[2]), &err);
      report(out, "check", rc, &err);
   } else if (inv->argc == 1 && strcmp(inv->argv[0], "own") == 0) {
      rc = store->journal_since(g_host, 0, print_row, out, &err);
      report(out, "own journal", rc, &err);
   } else {
      fprintf(out, "%s\n", command.usage);
   }
   fclose(out);
   return 0;
}

static termhost_status activate(const termhost_feature_t *f, const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)f; (void)info; (void)err;
   return TERMHOST_OK;
}

static void destroy(const termhost_feature_t *f) { (void)f; }

static const termhost_feature_t instance = {
   .struct_size = sizeof(termhost_feature_t), .activate = activate, .destroy = destroy, .run_command = run
};

static uint32_t factory_count(const termhost_feature_factory_t *factory) { (void)factory; return 1; }

static const termhost_feature_descriptor_t *factory_get(const termhost_feature_factory_t *factory, uint32_t index) {
   (void)factory;
   return index == 0 ? &descriptor : NULL;
}

static termhost_feature_t *factory_create(const termhost_feature_factory_t *factory, const char *feature_id,
                                          const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)factory; (void)feature_id; (void)info; (void)err;
   return (termhost_feature_t *)&instance;
}

static const termhost_feature_factory_t factory = {
   sizeof(termhost_feature_factory_t), factory_count, factory_get, factory_create
};

static bool plugin_init(const termhost_host_t *host, termhost_error_t *err) {
   const termhost_host_store_t *store = host->get_service(host, TERMHOST_SERVICE_STORE);
   termhost_error_t bad;
   g_host = host;
   if (!store || store->declare_syncable(host, "notes", TERMHOST_SYNC_MERGE_FIELDS, "last_used", err) != TERMHOST_OK) return false;
   g_bad_declaration = store->declare_syncable(host, "bad", TERMHOST_SYNC_MERGE_RECORD, "last_used", &bad);
   snprintf(g_bad_message, sizeof g_bad_message, "%s", g_bad_declaration == TERMHOST_OK ? "" : bad.message);
   if (store->declare_sync_check(host, "notes", check_note, NULL, err) != TERMHOST_OK) return false;
   g_private_check = store->declare_sync_check(host, "private", check_note, NULL, &bad);
   snprintf(g_private_check_message, sizeof g_private_check_message, "%s", g_private_check == TERMHOST_OK ? "" : bad.message);
   return true;
}

static void plugin_deinit(void) { g_host = NULL; }

static const void *plugin_get_factory(const char *factory_id) {
   return strcmp(factory_id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL;
}

static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), PLUGIN_ID, "1.0.0", plugin_init, plugin_deinit, plugin_get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
