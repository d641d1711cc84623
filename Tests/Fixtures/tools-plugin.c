/* A C plugin for the tool tests (services/tools.h, ABI 1.3).
 *
 * Features and their tools:
 *   org.test.tools (process)        echo_args, crash_now, wait_cancel, big_result, not_json
 * With -DBAD_TOOLS (`termhost plugins manifest` refuses to derive its manifest, so the test
 * writes one), tools the host must refuse one by one when it loads:
 *   org.test.tools (process)        echo_args, and Bad-Name (name), no_description,
 *                                   uses_pattern (a keyword the host does not check),
 *                                   broken_schema (not JSON)
 *   org.test.tools.scene (scene)    scene_tool: refused, tools are for process-scope features
 *   org.test.tools.other (process)  echo_args again: refused, the first feature keeps it
 * With -DDESCRIPTOR_SIZE=N the descriptors say they are N bytes (an ABI 1.2 layout ends before
 * `tools`): the host must then not read the tools at all.
 * Every call the provider receives is appended to $TOOLS_FIXTURE_LOG ("call NAME ARGS\n"), so a
 * test can tell that a refused call never reached it; wait_cancel creates $TOOLS_FIXTURE_STARTED
 * once running, then waits for cancel(), and after it $TOOLS_FIXTURE_CANCEL_DELAY_MS more (a
 * tool slow to honour its cancel, as one waiting for a server's confirmation). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <termhost/termhost.h>

#define TOOL(name, description, schema, flags) \
   { sizeof(termhost_tool_descriptor_t), name, description, schema, flags, 0 }
#define OBJECT_SCHEMA "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}"

static const termhost_tool_descriptor_t echo_args = TOOL("echo_args", "Returns its arguments.",
   "{\"type\": \"object\", \"properties\": {"
   "\"text\": {\"type\": \"string\", \"maxLength\": 10},"
   "\"count\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 5},"
   "\"mode\": {\"enum\": [\"a\", \"b\"]}},"
   "\"required\": [\"text\"], \"additionalProperties\": false}",
   TERMHOST_TOOL_READ_ONLY | TERMHOST_TOOL_PARALLEL_SAFE);
#ifdef BAD_TOOLS
static const termhost_tool_descriptor_t bad_name = TOOL("Bad-Name", "A name with capitals and '-'.", OBJECT_SCHEMA, 0);
static const termhost_tool_descriptor_t no_description = TOOL("no_description", "", OBJECT_SCHEMA, 0);
static const termhost_tool_descriptor_t uses_pattern = TOOL("uses_pattern", "Its schema uses pattern.",
   "{\"type\": \"object\", \"properties\": {\"host\": {\"type\": \"string\", \"pattern\": \"^[a-z]+$\"}}}", 0);
static const termhost_tool_descriptor_t broken_schema = TOOL("broken_schema", "Its schema is not JSON.", "{\"type\":", 0);
static const termhost_tool_descriptor_t *const main_tools[] = {
   &echo_args, &bad_name, &no_description, &uses_pattern, &broken_schema, NULL
};
#define FEATURE_COUNT 3
#else
static const termhost_tool_descriptor_t crash_now = TOOL("crash_now", "Crashes (SIGSEGV).", OBJECT_SCHEMA, 0);
static const termhost_tool_descriptor_t wait_cancel = TOOL("wait_cancel", "Runs until cancelled.", OBJECT_SCHEMA,
                                                           TERMHOST_TOOL_READ_ONLY);
static const termhost_tool_descriptor_t big_result = TOOL("big_result", "Returns 1 MiB and 100 bytes.", OBJECT_SCHEMA,
                                                          TERMHOST_TOOL_READ_ONLY);
static const termhost_tool_descriptor_t not_json = TOOL("not_json", "Returns text that is not JSON.", OBJECT_SCHEMA,
                                                        TERMHOST_TOOL_READ_ONLY);
static const termhost_tool_descriptor_t *const main_tools[] = {
   &echo_args, &crash_now, &wait_cancel, &big_result, &not_json, NULL
};
#define FEATURE_COUNT 1
#endif
static const termhost_tool_descriptor_t scene_tool = TOOL("scene_tool", "Offered by a scene feature.", OBJECT_SCHEMA, 0);
static const termhost_tool_descriptor_t *const scene_tools[] = { &scene_tool, NULL };
static const termhost_tool_descriptor_t *const other_tools[] = { &echo_args, NULL };

#include <stddef.h>
#ifndef DESCRIPTOR_SIZE
#define DESCRIPTOR_SIZE sizeof(termhost_feature_descriptor_t)
#endif

static const termhost_feature_descriptor_t descriptors[] = {
   { DESCRIPTOR_SIZE, "org.test.tools", "1.0.0", "Tools", NULL, 100, TERMHOST_SCOPE_PROCESS,
     NULL, NULL, NULL, NULL, NULL, NULL, main_tools, NULL, 0 /* concurrent_commands */ },
   { sizeof(termhost_feature_descriptor_t), "org.test.tools.scene", "1.0.0", "Scene tools", NULL, 110, TERMHOST_SCOPE_SCENE,
     NULL, NULL, NULL, NULL, NULL, NULL, scene_tools, NULL, 0 /* concurrent_commands */ },
   { sizeof(termhost_feature_descriptor_t), "org.test.tools.other", "1.0.0", "Other tools", NULL, 120, TERMHOST_SCOPE_PROCESS,
     NULL, NULL, NULL, NULL, NULL, NULL, other_tools, NULL, 0 /* concurrent_commands */ },
};

static volatile sig_atomic_t cancelled;

static void log_call(const termhost_tool_call_t *call) {
   const char *path = getenv("TOOLS_FIXTURE_LOG");
   FILE *f = path ? fopen(path, "a") : NULL;
   if (!f) return;
   fprintf(f, "call %s %s\n", call->tool, call->arguments_json);
   fclose(f);
}

static termhost_status fail(termhost_error_t *err, termhost_status code, const char *message) {
   err->code = code;
   snprintf(err->message, sizeof err->message, "%s", message);
   return code;
}

static termhost_status tool_call(const termhost_tool_provider_t *self, const termhost_tool_call_t *call,
                                 termhost_error_t *err) {
   (void)self;
   log_call(call);
   if (strcmp(call->tool, "echo_args") == 0) {
      size_t n = strlen(call->arguments_json) + 32;
      char *json = malloc(n);
      if (!json) return fail(err, TERMHOST_ERR_INTERNAL, "out of memory");
      snprintf(json, n, "{\"arguments\":%s}", call->arguments_json);
      call->write_result(call->sink_user, json, strlen(json));
      free(json);
      return TERMHOST_OK;
   }
   if (strcmp(call->tool, "crash_now") == 0) {
      raise(SIGSEGV);
      return TERMHOST_ERR_INTERNAL;
   }
   if (strcmp(call->tool, "wait_cancel") == 0) {
      const char *started = getenv("TOOLS_FIXTURE_STARTED");
      struct timespec tick = { 0, 10 * 1000 * 1000 };
      FILE *f = started ? fopen(started, "w") : NULL;
      if (f) fclose(f);
      const char *delay = getenv("TOOLS_FIXTURE_CANCEL_DELAY_MS");
      long ms = delay ? strtol(delay, NULL, 10) : 0;
      struct timespec late = { ms / 1000, (ms % 1000) * 1000 * 1000 };
      while (!cancelled) nanosleep(&tick, NULL);
      if (ms > 0) nanosleep(&late, NULL);
      return fail(err, TERMHOST_ERR_CANCELLED, "wait_cancel: cancelled");
   }
   if (strcmp(call->tool, "big_result") == 0) {
      size_t n = 1024 * 1024 + 100;
      char *json = malloc(n);
      if (!json) return fail(err, TERMHOST_ERR_INTERNAL, "out of memory");
      memset(json, 'x', n);
      json[0] = '"';
      json[n - 1] = '"';
      call->write_result(call->sink_user, json, n);
      free(json);
      return TERMHOST_OK;
   }
   if (strcmp(call->tool, "not_json") == 0) {
      call->write_result(call->sink_user, "not json", 8);
      return TERMHOST_OK;
   }
   return fail(err, TERMHOST_ERR_NOT_FOUND, "no such tool in the fixture");
}

static void tool_cancel(const termhost_tool_provider_t *self, uint64_t call_id) {
   (void)self; (void)call_id;
   cancelled = 1;
}

static const termhost_tool_provider_t provider = { sizeof(termhost_tool_provider_t), NULL, tool_call, tool_cancel };

static const void *get_service(const termhost_feature_t *f, const char *id) {
   (void)f;
   return strcmp(id, TERMHOST_TOOL_PROVIDER) == 0 ? &provider : NULL;
}

static void destroy(const termhost_feature_t *f) { (void)f; }

static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, destroy, get_service, NULL
};

static uint32_t count(const termhost_feature_factory_t *f) { (void)f; return FEATURE_COUNT; }

static const termhost_feature_descriptor_t *get_descriptor(const termhost_feature_factory_t *f, uint32_t i) {
   (void)f;
   return i < FEATURE_COUNT ? &descriptors[i] : NULL;
}

static termhost_feature_t *create(const termhost_feature_factory_t *f, const char *id, const termhost_scene_info_t *info,
                                  termhost_error_t *err) {
   (void)f; (void)id; (void)info; (void)err;
   return (termhost_feature_t *)&instance;
}

static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), count, get_descriptor, create };

static bool plugin_init(const termhost_host_t *host, termhost_error_t *err) { (void)host; (void)err; return true; }
static void plugin_deinit(void) {}
static const void *get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL; }

static const termhost_plugin_entry_t entry = {
   TERMHOST_ABI_INIT, sizeof(termhost_plugin_entry_t), "org.test.tools", "1.0.0", plugin_init, plugin_deinit, get_factory
};

TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
