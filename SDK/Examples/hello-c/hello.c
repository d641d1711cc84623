/* hello-c: a complete Termhost plugin in plain C99, built from the SDK header alone.
 *
 * It contributes one feature, org.termhost.examples.hello-c, with one command:
 *   termhost hello [NAME]   greets NAME (or the setting "name", default "world") and counts how
 *                           many times it ran, in the host store;
 * and one tool for the assistant and MCP clients (ABI 1.3, services/tools.h):
 *   local_time              the machine's local date, time and time zone; read-only.
 * Build: make (see Makefile). Load: put the bundle directory on TERMHOST_PLUGIN_PATH. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include <termhost/termhost.h>

#define FEATURE_ID "org.termhost.examples.hello-c"

static const termhost_host_t *g_host;              /* valid between init() and deinit() */
static const termhost_host_log_t *g_log;
static const termhost_host_store_t *g_store;
static const termhost_host_config_t *g_config;

/* ---- the feature ------------------------------------------------------------------------ */

static const termhost_command_descriptor_t hello_command = {
   sizeof(termhost_command_descriptor_t), "hello", "Greet someone and count the greetings",
   "usage: termhost hello [NAME]\n"
   "Prints a greeting and how many times this command has run on this machine.\n"
   "Setting org.termhost.examples.hello-c/name changes the default NAME."
};
static const termhost_command_descriptor_t *const commands[] = { &hello_command, NULL };
static const char *const required_services[] = { TERMHOST_SERVICE_STORE, NULL };

/* A tool is declared here, statically, so `termhost tools` lists it from the manifest; the host
 * checks every call's arguments against input_schema before local_time_call() sees them. */
static const termhost_tool_descriptor_t local_time_tool = {
   sizeof(termhost_tool_descriptor_t), "local_time",
   "The local date, time and time zone of the machine termhost runs on (not of a remote host).",
   "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}",
   TERMHOST_TOOL_READ_ONLY | TERMHOST_TOOL_PARALLEL_SAFE, 0 /* every mode */
};
static const termhost_tool_descriptor_t *const tools[] = { &local_time_tool, NULL };

/* Designated initializers: members the ABI appends later (concurrent_commands in 1.6) are
 * zero, and -Wextra has nothing to say about them. */
static const termhost_feature_descriptor_t descriptor = {
   .struct_size = sizeof(termhost_feature_descriptor_t),
   .id = FEATURE_ID, .version = "1.0.0", .display_name = "Hello (C)",
   .description = "An example feature written in C.",
   .order = 1000, .scope = TERMHOST_SCOPE_PROCESS,
   .requires_services = required_services, .commands = commands, .tools = tools
};

/* Copies a store value into a small buffer; the sink's data is only valid during the call. */
static void copy_sink(void *user, const void *data, size_t size) {
   char *buf = user;
   if (size > 31) size = 31;
   memcpy(buf, data, size);
   buf[size] = '\0';
}

static int32_t hello_run(const termhost_feature_t *f, const termhost_command_invocation_t *inv) {
   char count_text[32] = "0", name[128] = "world", setting[128];
   termhost_error_t err;
   long count;
   FILE *out;
   (void)f;

   if (!g_store) {
      dprintf(inv->stderr_fd, "termhost hello: the host store is unavailable\n");
      return 1;
   }
   if (inv->argc > 1) {
      dprintf(inv->stderr_fd, "usage: termhost hello [NAME]\n");
      return 2;
   }
   if (inv->argc == 1) {
      snprintf(name, sizeof name, "%s", inv->argv[0]);
   } else if (g_config && g_config->get_setting(g_host, FEATURE_ID, "name", setting,
                                                sizeof setting, NULL, &err) == TERMHOST_OK) {
      /* Settings arrive as JSON; accept a plain JSON string. */
      size_t n = strlen(setting);
      if (n >= 2 && setting[0] == '"' && setting[n - 1] == '"') {
         setting[n - 1] = '\0';
         snprintf(name, sizeof name, "%s", setting + 1);
      }
   }

   if (g_store->get(g_host, "counters", "hello", copy_sink, count_text, &err) != TERMHOST_OK &&
       err.code != TERMHOST_ERR_NOT_FOUND) {
      dprintf(inv->stderr_fd, "termhost hello: cannot read the counter: %s\n", err.message);
      return 1;
   }
   count = strtol(count_text, NULL, 10) + 1;
   snprintf(count_text, sizeof count_text, "%ld", count);
   if (g_store->put(g_host, "counters", "hello", count_text, strlen(count_text), &err) != TERMHOST_OK) {
      dprintf(inv->stderr_fd, "termhost hello: cannot save the counter: %s\n", err.message);
      return 1;
   }

   out = fdopen(dup(inv->stdout_fd), "w");
   if (!out) return 1;
   if (inv->json_output)
      fprintf(out, "{\"greeting\":\"Hello, %s!\",\"count\":%ld}\n", name, count);
   else
      fprintf(out, "Hello, %s! (greeting number %ld, from C)\n", name, count);
   fclose(out);
   if (g_log) g_log->log(g_host, TERMHOST_LOG_DEBUG, "hello command ran");
   return 0;
}

static termhost_status hello_activate(const termhost_feature_t *f, const termhost_scene_info_t *info,
                                      termhost_error_t *err) {
   (void)f; (void)info; (void)err;
   return TERMHOST_OK;
}

static void hello_destroy(const termhost_feature_t *f) {
   (void)f; /* the instance is static */
}

/* The tool's implementation. It may run on any thread, at the same time as itself (it is
 * parallel-safe): it keeps no state. Arguments are {} (the schema allows nothing else). */
static termhost_status local_time_call(const termhost_tool_provider_t *self, const termhost_tool_call_t *call,
                                       termhost_error_t *err) {
   char when[64], json[160];
   struct tm local;
   time_t now = time(NULL);
   int n;
   (void)self;
   tzset(); /* localtime_r need not read TZ itself */
   if (!localtime_r(&now, &local) || strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", &local) == 0) {
      err->code = TERMHOST_ERR_INTERNAL;
      snprintf(err->message, sizeof err->message, "local_time: the C library cannot tell the local time");
      return TERMHOST_ERR_INTERNAL;
   }
   /* Both strings are made of digits, letters and '+-:T', so they need no JSON escaping. */
   n = snprintf(json, sizeof json, "{\"local_time\":\"%s\",\"time_zone\":\"%s\"}", when,
                tzname[local.tm_isdst > 0 ? 1 : 0]);
   call->write_result(call->sink_user, json, (size_t)n);
   return TERMHOST_OK;
}

/* A call that finishes at once has nothing to stop. */
static void local_time_cancel(const termhost_tool_provider_t *self, uint64_t call_id) {
   (void)self; (void)call_id;
}

static const termhost_tool_provider_t tool_provider = {
   sizeof(termhost_tool_provider_t), NULL, local_time_call, local_time_cancel
};

static const void *hello_get_service(const termhost_feature_t *f, const char *service_id) {
   (void)f;
   return strcmp(service_id, TERMHOST_TOOL_PROVIDER) == 0 ? &tool_provider : NULL;
}

static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL,
   hello_activate, NULL, NULL, NULL, NULL, NULL, NULL, hello_destroy, hello_get_service, hello_run
};

/* ---- the factory ------------------------------------------------------------------------ */

static uint32_t factory_count(const termhost_feature_factory_t *factory) {
   (void)factory;
   return 1;
}

static const termhost_feature_descriptor_t *factory_get(const termhost_feature_factory_t *factory,
                                                        uint32_t index) {
   (void)factory;
   return index == 0 ? &descriptor : NULL;
}

static termhost_feature_t *factory_create(const termhost_feature_factory_t *factory,
                                          const char *feature_id,
                                          const termhost_scene_info_t *info, termhost_error_t *err) {
   (void)factory; (void)info;
   if (strcmp(feature_id, FEATURE_ID) != 0) {
      err->code = TERMHOST_ERR_NOT_FOUND;
      snprintf(err->message, sizeof err->message, "no feature '%s' in hello-c", feature_id);
      return NULL;
   }
   return (termhost_feature_t *)&instance;
}

static const termhost_feature_factory_t factory = {
   sizeof(termhost_feature_factory_t), factory_count, factory_get, factory_create
};

/* ---- the entry -------------------------------------------------------------------------- */

/* Looks the services up once. A missing service is not a reason to fail init(): the feature
 * lists the store in requires_services, so the host will not create it without one (and says
 * why in `termhost features`). */
static bool plugin_init(const termhost_host_t *host, termhost_error_t *err) {
   (void)err;
   g_host = host;
   g_log = host->get_service(host, TERMHOST_SERVICE_LOG);
   g_config = host->get_service(host, TERMHOST_SERVICE_CONFIG);
   g_store = host->get_service(host, TERMHOST_SERVICE_STORE);
   return true;
}

static void plugin_deinit(void) {
   g_host = NULL;
}

static const void *plugin_get_factory(const char *factory_id) {
   return strcmp(factory_id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL;
}

static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t),
   "org.termhost.examples.hello-c", "1.0.0",
   plugin_init, plugin_deinit, plugin_get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) {
   return &entry;
}
