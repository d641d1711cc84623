/* A C plugin for the tests: provider context (host.h, ABI 1.2).
 *
 * Two features, org.test.ctx.one and org.test.ctx.two, are instances of the same code; each
 * provides a service (org.test.ctx.one/1, org.test.ctx.two/1) through a table of its own whose
 * `context` is that instance's state. A third feature, org.test.ctx.user, with the lowest order
 * key, requires both services, looks them up in activate() (so it must start after its
 * providers) and `termhost ctx` calls each and prints whose context each call saw.
 * No globals hold provider state: the only static is the host handle of the consumer. */
/* Uses nothing of ABI 1.2 from the host (the context is between provider and consumer). */
#define TERMHOST_ABI_MINOR_NEEDED 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termhost/termhost.h>

/* The service: a 1.2-style table, { struct_size, context, entry points taking the table }. */
typedef struct ctx_service {
   uint32_t struct_size;
   void *context;
   /* Returns the name of the instance whose table this is, and counts the call there. */
   const char *(*whoami)(const struct ctx_service *self, int32_t *calls);
} ctx_service_t;

/* One provider instance: its feature vtable first, so the feature pointer is the instance. */
typedef struct provider {
   termhost_feature_t feature;
   ctx_service_t table;
   char name[64];
   char service_id[64];
   int32_t calls;
} provider_t;

static const char *whoami(const ctx_service_t *self, int32_t *calls) {
   provider_t *p = self->context;
   p->calls += 1;
   if (calls) *calls = p->calls;
   return p->name;
}

static const void *provider_service(const termhost_feature_t *f, const char *service_id) {
   const provider_t *p = (const provider_t *)f;
   return strcmp(service_id, p->service_id) == 0 ? &p->table : NULL;
}

static void provider_destroy(const termhost_feature_t *f) { free((void *)f); }

static const termhost_host_t *H;

typedef struct consumer {
   termhost_feature_t feature;
   const ctx_service_t *one, *two;
} consumer_t;

static termhost_status user_activate(const termhost_feature_t *f, const termhost_scene_info_t *info, termhost_error_t *err) {
   consumer_t *c = f->feature_data;
   (void)info;
   c->one = H->get_service(H, "org.test.ctx.one/1");
   c->two = H->get_service(H, "org.test.ctx.two/1");
   if (!c->one || !c->two) {
      err->code = TERMHOST_ERR_NOT_FOUND;
      snprintf(err->message, sizeof err->message, "activated before its providers: one %s, two %s",
               c->one ? "found" : "missing", c->two ? "found" : "missing");
      return TERMHOST_ERR_NOT_FOUND;
   }
   return TERMHOST_OK;
}

static int32_t user_run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   const consumer_t *c = f->feature_data;
   int32_t calls = 0;
   const char *a, *b;
   a = c->one->whoami(c->one, &calls);
   dprintf(inv->stdout_fd, "one: %s (call %d)\n", a, (int)calls);
   b = c->two->whoami(c->two, &calls);
   dprintf(inv->stdout_fd, "two: %s (call %d)\n", b, (int)calls);
   a = c->one->whoami(c->one, &calls);
   dprintf(inv->stdout_fd, "one again: %s (call %d)\n", a, (int)calls);
   dprintf(inv->stdout_fd, "contexts differ: %d\n", c->one->context != c->two->context);
   return 0;
}

static void user_destroy(const termhost_feature_t *f) { free((void *)f); }

static const char *const provides_one[] = { "org.test.ctx.one/1", NULL };
static const char *const provides_two[] = { "org.test.ctx.two/1", NULL };
static const char *const requires_both[] = { "org.test.ctx.one/1", "org.test.ctx.two/1", NULL };
static const termhost_command_descriptor_t cmd = { sizeof(termhost_command_descriptor_t), "ctx", "provider context probe", NULL };
static const termhost_command_descriptor_t *const cmds[] = { &cmd, NULL };
static const termhost_feature_descriptor_t descs[] = {
   { sizeof(termhost_feature_descriptor_t), "org.test.ctx.user", "1.0.0", "Consumer", NULL, 1,
     TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, requires_both, NULL, cmds, NULL, NULL, 0 /* concurrent_commands */ },
   { sizeof(termhost_feature_descriptor_t), "org.test.ctx.one", "1.0.0", "Provider one", NULL, 500,
     TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, provides_one, NULL, NULL, NULL, 0 /* concurrent_commands */ },
   { sizeof(termhost_feature_descriptor_t), "org.test.ctx.two", "1.0.0", "Provider two", NULL, 600,
     TERMHOST_SCOPE_PROCESS, NULL, NULL, NULL, NULL, provides_two, NULL, NULL, NULL, 0 /* concurrent_commands */ },
};

static uint32_t count(const termhost_feature_factory_t *x) { (void)x; return 3; }
static const termhost_feature_descriptor_t *get(const termhost_feature_factory_t *x, uint32_t i) { (void)x; return i < 3 ? &descs[i] : NULL; }

static termhost_feature_t *create(const termhost_feature_factory_t *x, const char *id, const termhost_scene_info_t *s, termhost_error_t *e) {
   (void)x; (void)s; (void)e;
   if (strcmp(id, "org.test.ctx.user") == 0) {
      consumer_t *c = calloc(1, sizeof *c);
      c->feature.struct_size = sizeof(termhost_feature_t);
      c->feature.feature_data = c;
      c->feature.activate = user_activate;
      c->feature.destroy = user_destroy;
      c->feature.run_command = user_run;
      return &c->feature;
   } else {
      /* The same code for both providers: only the instance's own state tells them apart. */
      provider_t *p = calloc(1, sizeof *p);
      p->feature.struct_size = sizeof(termhost_feature_t);
      p->feature.feature_data = p;
      p->feature.get_service = provider_service;
      p->feature.destroy = provider_destroy;
      p->table.struct_size = sizeof(ctx_service_t);
      p->table.context = p;
      p->table.whoami = whoami;
      snprintf(p->name, sizeof p->name, "%s", id);
      snprintf(p->service_id, sizeof p->service_id, "%s/1", id);
      return &p->feature;
   }
}

static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get, create };
static bool init(const termhost_host_t *host, termhost_error_t *err) { (void)err; H = host; return true; }
static void deinit(void) { H = NULL; }
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) ? NULL : &factory; }
static const termhost_plugin_entry_t entry = { TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.ctx", "1.0.0", init, deinit, get_factory };
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
