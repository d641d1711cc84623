/* A C plugin whose one feature is nothing but typed actions, for Tests/CLITests/ActionsEndToEndTests:
 * an echo per type (the result is the argument), an action failing through termhost_error_t,
 * one that crashes, and a main-thread one. Every call first appends the action's name and a
 * newline to $ACTIONS_CALL_LOG (when set), so a test can prove a refused call never ran.
 *   -DUNEXPORTED  also declares act_hidden, which has hidden visibility (not exported)
 *   -DMISSING     also declares act_missing, which no code defines */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termhost/termhost.h>

static void called(const char *name) {
   const char *path = getenv("ACTIONS_CALL_LOG");
   FILE *f = path ? fopen(path, "a") : NULL;
   if (f) { fprintf(f, "%s\n", name); fclose(f); }
}

TERMHOST_ACTION_EXPORT bool act_bool(bool v) { called("bool"); return v; }
TERMHOST_ACTION_EXPORT int32_t act_i32(int32_t v) { called("i32"); return v; }
TERMHOST_ACTION_EXPORT int64_t act_i64(int64_t v) { called("i64"); return v; }
TERMHOST_ACTION_EXPORT uint32_t act_u32(uint32_t v) { called("u32"); return v; }
TERMHOST_ACTION_EXPORT uint64_t act_u64(uint64_t v) { called("u64"); return v; }
TERMHOST_ACTION_EXPORT double act_double(double v) { called("double"); return v; }
TERMHOST_ACTION_EXPORT void act_string(const char *s, termhost_value_sink sink, void *user) {
   called("string");
   sink(user, s, strlen(s));
}
TERMHOST_ACTION_EXPORT void act_bytes(const void *data, size_t size, termhost_value_sink sink, void *user) {
   called("bytes");
   sink(user, data, size);
}
TERMHOST_ACTION_EXPORT void act_json(const char *json, termhost_value_sink sink, void *user) {
   called("json");
   sink(user, json, strlen(json));
}
/* Mixed: (int32 a, int64 b, uint32 c, uint64 d, double e, bool f) -> double, their sum (f adds 1). */
TERMHOST_ACTION_EXPORT double act_sum(int32_t a, int64_t b, uint32_t c, uint64_t d, double e, bool f) {
   called("sum");
   return (double)a + (double)b + (double)c + (double)d + e + (f ? 1.0 : 0.0);
}
TERMHOST_ACTION_EXPORT int32_t act_fail(const char *message, termhost_error_t *err) {
   called("fail");
   err->code = TERMHOST_ERR_IO;
   snprintf(err->message, sizeof err->message, "%s", message);
   return 7;
}
TERMHOST_ACTION_EXPORT void act_crash(void) {
   called("crash");
   raise(SIGSEGV);
}
TERMHOST_ACTION_EXPORT int32_t act_main(void) { called("main"); return 1; }
#ifdef UNEXPORTED
/* Hidden: left out of .dynsym whatever the version script says. */
__attribute__((visibility("hidden"))) int32_t act_hidden(void) { return 0; }
#endif
#ifdef MISSING
int32_t act_missing(void);
#endif

#define P(name, type) TERMHOST_PARAM(name, type, "the value")
static const termhost_action_param_t bool_p[] = { P("v", TERMHOST_ACTION_BOOL) };
static const termhost_action_param_t i32_p[] = { P("v", TERMHOST_ACTION_INT32) };
static const termhost_action_param_t i64_p[] = { P("v", TERMHOST_ACTION_INT64) };
static const termhost_action_param_t u32_p[] = { P("v", TERMHOST_ACTION_UINT32) };
static const termhost_action_param_t u64_p[] = { P("v", TERMHOST_ACTION_UINT64) };
static const termhost_action_param_t double_p[] = { P("v", TERMHOST_ACTION_DOUBLE) };
static const termhost_action_param_t string_p[] = { P("s", TERMHOST_ACTION_STRING) };
static const termhost_action_param_t bytes_p[] = { P("data", TERMHOST_ACTION_BYTES) };
static const termhost_action_param_t json_p[] = { P("value", TERMHOST_ACTION_JSON) };
static const termhost_action_param_t sum_p[] = {
   P("a", TERMHOST_ACTION_INT32), P("b", TERMHOST_ACTION_INT64), P("c", TERMHOST_ACTION_UINT32),
   P("d", TERMHOST_ACTION_UINT64), P("e", TERMHOST_ACTION_DOUBLE), P("f", TERMHOST_ACTION_BOOL),
};
static const termhost_action_param_t fail_p[] = { P("message", TERMHOST_ACTION_STRING) };
#define RO TERMHOST_ACTION_READ_ONLY
#define ANY TERMHOST_ACTION_ANY_THREAD
TERMHOST_ACTION(a_bool, "echo-bool", "returns its argument", act_bool, bool_p, TERMHOST_ACTION_BOOL, RO, ANY);
TERMHOST_ACTION(a_i32, "echo-i32", "returns its argument", act_i32, i32_p, TERMHOST_ACTION_INT32, RO, ANY);
TERMHOST_ACTION(a_i64, "echo-i64", "returns its argument", act_i64, i64_p, TERMHOST_ACTION_INT64, RO, ANY);
TERMHOST_ACTION(a_u32, "echo-u32", "returns its argument", act_u32, u32_p, TERMHOST_ACTION_UINT32, RO, ANY);
TERMHOST_ACTION(a_u64, "echo-u64", "returns its argument", act_u64, u64_p, TERMHOST_ACTION_UINT64, RO, ANY);
TERMHOST_ACTION(a_double, "echo-double", "returns its argument", act_double, double_p, TERMHOST_ACTION_DOUBLE, RO, ANY);
TERMHOST_ACTION(a_string, "echo-string", "returns its argument", act_string, string_p, TERMHOST_ACTION_STRING, RO, ANY);
TERMHOST_ACTION(a_bytes, "echo-bytes", "returns its argument", act_bytes, bytes_p, TERMHOST_ACTION_BYTES, RO, ANY);
TERMHOST_ACTION(a_json, "echo-json", "returns its argument", act_json, json_p, TERMHOST_ACTION_JSON, RO, ANY);
TERMHOST_ACTION(a_sum, "sum", "adds one of each numeric type", act_sum, sum_p, TERMHOST_ACTION_DOUBLE, RO, ANY);
TERMHOST_ACTION(a_fail, "fail", "fails with the message", act_fail, fail_p, TERMHOST_ACTION_INT32,
                TERMHOST_ACTION_TAKES_ERROR, ANY);
TERMHOST_ACTION_NO_PARAMS(a_crash, "crash", "raises SIGSEGV", act_crash, TERMHOST_ACTION_VOID, 0, ANY);
TERMHOST_ACTION_NO_PARAMS(a_main, "main-only", "runs on the main thread", act_main, TERMHOST_ACTION_INT32, RO,
                          TERMHOST_ACTION_MAIN_THREAD);
#ifdef UNEXPORTED
TERMHOST_ACTION_NO_PARAMS(a_hidden, "hidden", "not in the export list", act_hidden, TERMHOST_ACTION_INT32, RO, ANY);
#endif
#ifdef MISSING
static const termhost_action_descriptor_t a_missing = {
   sizeof(termhost_action_descriptor_t), "missing", "no code defines it", "act_missing", NULL, 0,
   TERMHOST_ACTION_INT32, RO, ANY
};
#endif
static const termhost_action_descriptor_t *const actions[] = {
   &a_bool, &a_i32, &a_i64, &a_u32, &a_u64, &a_double, &a_string, &a_bytes, &a_json, &a_sum, &a_fail, &a_crash, &a_main,
#ifdef UNEXPORTED
   &a_hidden,
#endif
#ifdef MISSING
   &a_missing,
#endif
   NULL
};

static const termhost_feature_descriptor_t descriptor = {
   sizeof(termhost_feature_descriptor_t), "org.test.actions", "1.0.0", "Actions", NULL, 100, TERMHOST_SCOPE_PROCESS,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, actions, 0 /* concurrent_commands */
};
static const termhost_feature_t instance = {
   sizeof(termhost_feature_t), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
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
static bool p_init(const termhost_host_t *host, termhost_error_t *err) { (void)host; (void)err; return true; }
static void p_deinit(void) {}
static const void *p_get_factory(const char *id) {
   return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL;
}
static const termhost_plugin_entry_t entry = {
   { TERMHOST_ABI_MAJOR, TERMHOST_ABI_MINOR, 0 }, sizeof(termhost_plugin_entry_t),
   "org.test.actions", "1.0.0", p_init, p_deinit, p_get_factory
};
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
