/* actions-c: a plugin whose feature is nothing but typed actions (termhost/action.h). No
 * command parses argv here: the host converts `termhost call FEATURE/ACTION ARG...` (or a JSON
 * object, or an assistant's tool call) to these C parameters and calls each function through
 * libffi. Each function is exported by exports.map, and declared once beside it.
 *   termhost call org.termhost.examples.actions-c/crc32 /etc/hostname
 *   termhost call org.termhost.examples.actions-c/resolve localhost
 *   termhost call org.termhost.examples.actions-c/add-i32 2 40 */
#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <termhost/termhost.h>

#define FEATURE_ID "org.termhost.examples.actions-c"
#define RO TERMHOST_ACTION_READ_ONLY
#define ERR TERMHOST_ACTION_TAKES_ERROR
#define ANY TERMHOST_ACTION_ANY_THREAD

static void fail(termhost_error_t *err, termhost_status code, const char *what, const char *detail) {
   err->code = code;
   snprintf(err->message, sizeof err->message, "%s: %s", what, detail);
}

/* ---- A checksum of a local file: CRC-32 (IEEE, as zlib and `gzip -l` compute it). ---- */
TERMHOST_ACTION_EXPORT uint32_t actions_crc32(const char *path, termhost_error_t *err) {
   FILE *f = fopen(path, "rb");
   if (!f) { fail(err, TERMHOST_ERR_IO, path, strerror(errno)); return 0; }
   uint32_t crc = 0xFFFFFFFFu;
   unsigned char buf[65536];
   size_t n;
   while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
      for (size_t i = 0; i < n; i++) {
         crc ^= buf[i];
         for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
      }
   }
   int bad = ferror(f);
   fclose(f);
   if (bad) { fail(err, TERMHOST_ERR_IO, path, "read error"); return 0; }
   return crc ^ 0xFFFFFFFFu;
}
static const termhost_action_param_t crc32_params[] = {
   TERMHOST_PARAM("path", TERMHOST_ACTION_STRING, "a local file"),
};
TERMHOST_ACTION(crc32_action, "crc32", "CRC-32 of a local file", actions_crc32, crc32_params,
                TERMHOST_ACTION_UINT32, RO | ERR, ANY);

/* ---- A DNS lookup: the addresses getaddrinfo(3) gives for a name, as a JSON array. ---- */
TERMHOST_ACTION_EXPORT void actions_resolve(const char *name, termhost_value_sink sink, void *user,
                                            termhost_error_t *err) {
   struct addrinfo hints, *res = NULL;
   memset(&hints, 0, sizeof hints);
   hints.ai_family = AF_UNSPEC;
   hints.ai_socktype = SOCK_STREAM;
   int rc = getaddrinfo(name, NULL, &hints, &res);
   if (rc != 0) { fail(err, TERMHOST_ERR_NOT_FOUND, name, gai_strerror(rc)); return; }
   char json[4096] = "[";
   size_t used = 1;
   for (struct addrinfo *a = res; a; a = a->ai_next) {
      char text[INET6_ADDRSTRLEN];
      const void *addr = a->ai_family == AF_INET ? (const void *)&((struct sockaddr_in *)(void *)a->ai_addr)->sin_addr
                                                 : (const void *)&((struct sockaddr_in6 *)(void *)a->ai_addr)->sin6_addr;
      if (!inet_ntop(a->ai_family, addr, text, sizeof text)) continue;
      /* Each address once (getaddrinfo repeats them per protocol), while they fit. */
      char quoted[INET6_ADDRSTRLEN + 3];
      snprintf(quoted, sizeof quoted, "\"%s\"", text);
      if (strstr(json, quoted) || used + strlen(quoted) + 2 >= sizeof json) continue;
      used += (size_t)snprintf(json + used, sizeof json - used, "%s%s", used > 1 ? "," : "", quoted);
   }
   freeaddrinfo(res);
   snprintf(json + used, sizeof json - used, "]");
   sink(user, json, strlen(json));
}
static const termhost_action_param_t resolve_params[] = {
   TERMHOST_PARAM("name", TERMHOST_ACTION_STRING, "a host name"),
};
TERMHOST_ACTION(resolve_action, "resolve", "the addresses a host name resolves to (getaddrinfo)", actions_resolve,
                resolve_params, TERMHOST_ACTION_JSON, RO | ERR, ANY);

/* ---- Arithmetic over each type; overflow is an error, never a wrapped result. ---- */
TERMHOST_ACTION_EXPORT int32_t actions_add_i32(int32_t a, int32_t b, termhost_error_t *err) {
   if ((b > 0 && a > INT32_MAX - b) || (b < 0 && a < INT32_MIN - b)) fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "add-i32", "overflow");
   return a + b;
}
TERMHOST_ACTION_EXPORT int64_t actions_add_i64(int64_t a, int64_t b, termhost_error_t *err) {
   if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "add-i64", "overflow");
   return a + b;
}
TERMHOST_ACTION_EXPORT uint32_t actions_add_u32(uint32_t a, uint32_t b, termhost_error_t *err) {
   if (a > UINT32_MAX - b) fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "add-u32", "overflow");
   return a + b;
}
TERMHOST_ACTION_EXPORT uint64_t actions_add_u64(uint64_t a, uint64_t b, termhost_error_t *err) {
   if (a > UINT64_MAX - b) fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "add-u64", "overflow");
   return a + b;
}
TERMHOST_ACTION_EXPORT double actions_divide(double a, double b, termhost_error_t *err) {
   if (b == 0) fail(err, TERMHOST_ERR_INVALID_ARGUMENT, "divide", "division by zero");
   return b == 0 ? 0 : a / b;
}
TERMHOST_ACTION_EXPORT bool actions_not(bool v) { return !v; }
/* ASCII letters upper-cased; other UTF-8 unchanged. */
TERMHOST_ACTION_EXPORT void actions_upper(const char *text, termhost_value_sink sink, void *user) {
   char buf[4096];
   size_t n = strlen(text) < sizeof buf ? strlen(text) : sizeof buf;
   for (size_t i = 0; i < n; i++) buf[i] = (text[i] >= 'a' && text[i] <= 'z') ? (char)(text[i] - 32) : text[i];
   sink(user, buf, n);
}
/* Bytes in reverse order (a byte buffer may hold NUL). */
TERMHOST_ACTION_EXPORT void actions_reverse(const void *data, size_t size, termhost_value_sink sink, void *user) {
   unsigned char buf[4096];
   size_t n = size < sizeof buf ? size : sizeof buf;
   for (size_t i = 0; i < n; i++) buf[i] = ((const unsigned char *)data)[size - 1 - i];
   sink(user, buf, n);
}
/* A JSON value wrapped as {"value": ...}: the host checked it is JSON, and checks the result. */
TERMHOST_ACTION_EXPORT void actions_pretty(const char *json, termhost_value_sink sink, void *user) {
   char buf[8192];
   int n = snprintf(buf, sizeof buf, "{\"value\":%s}", json);
   if (n > 0 && (size_t)n < sizeof buf) sink(user, buf, (size_t)n);
}

#define TWO(type, what) { TERMHOST_PARAM("a", type, "the first " what), TERMHOST_PARAM("b", type, "the second " what) }
static const termhost_action_param_t i32_params[] = TWO(TERMHOST_ACTION_INT32, "addend");
static const termhost_action_param_t i64_params[] = TWO(TERMHOST_ACTION_INT64, "addend");
static const termhost_action_param_t u32_params[] = TWO(TERMHOST_ACTION_UINT32, "addend");
static const termhost_action_param_t u64_params[] = TWO(TERMHOST_ACTION_UINT64, "addend");
static const termhost_action_param_t divide_params[] = TWO(TERMHOST_ACTION_DOUBLE, "operand (a / b)");
static const termhost_action_param_t not_params[] = { TERMHOST_PARAM("v", TERMHOST_ACTION_BOOL, "a truth value") };
static const termhost_action_param_t upper_params[] = { TERMHOST_PARAM("text", TERMHOST_ACTION_STRING, "UTF-8 text") };
static const termhost_action_param_t reverse_params[] = { TERMHOST_PARAM("data", TERMHOST_ACTION_BYTES, "any bytes") };
static const termhost_action_param_t pretty_params[] = { TERMHOST_PARAM("value", TERMHOST_ACTION_JSON, "any JSON value") };
TERMHOST_ACTION(add_i32, "add-i32", "a + b (int32)", actions_add_i32, i32_params, TERMHOST_ACTION_INT32, RO | ERR, ANY);
TERMHOST_ACTION(add_i64, "add-i64", "a + b (int64)", actions_add_i64, i64_params, TERMHOST_ACTION_INT64, RO | ERR, ANY);
TERMHOST_ACTION(add_u32, "add-u32", "a + b (uint32)", actions_add_u32, u32_params, TERMHOST_ACTION_UINT32, RO | ERR, ANY);
TERMHOST_ACTION(add_u64, "add-u64", "a + b (uint64)", actions_add_u64, u64_params, TERMHOST_ACTION_UINT64, RO | ERR, ANY);
TERMHOST_ACTION(divide, "divide", "a / b (double)", actions_divide, divide_params, TERMHOST_ACTION_DOUBLE, RO | ERR, ANY);
TERMHOST_ACTION(not_action, "not", "the negation of a bool", actions_not, not_params, TERMHOST_ACTION_BOOL, RO, ANY);
TERMHOST_ACTION(upper, "upper", "ASCII letters upper-cased", actions_upper, upper_params, TERMHOST_ACTION_STRING, RO, ANY);
TERMHOST_ACTION(reverse, "reverse", "the bytes in reverse order", actions_reverse, reverse_params, TERMHOST_ACTION_BYTES, RO, ANY);
TERMHOST_ACTION(pretty, "wrap", "the value inside {\"value\": ...}", actions_pretty, pretty_params, TERMHOST_ACTION_JSON, RO, ANY);

static const termhost_action_descriptor_t *const actions[] = {
   &crc32_action, &resolve_action, &add_i32, &add_i64, &add_u32, &add_u64, &divide, &not_action, &upper, &reverse, &pretty, NULL
};

/* The feature: no commands, no services; its instance has nothing to do. */
static const termhost_feature_descriptor_t descriptor = {
   .struct_size = sizeof(termhost_feature_descriptor_t), .id = FEATURE_ID, .version = "1.0.0",
   .display_name = "Actions (C)", .description = "Typed actions: a file checksum, a DNS lookup, arithmetic.",
   .order = 1000, .scope = TERMHOST_SCOPE_PROCESS, .actions = actions
};
static const termhost_feature_t instance = { .struct_size = sizeof(termhost_feature_t) };
static uint32_t factory_count(const termhost_feature_factory_t *f) { (void)f; return 1; }
static const termhost_feature_descriptor_t *factory_get(const termhost_feature_factory_t *f, uint32_t i) {
   (void)f;
   return i == 0 ? &descriptor : NULL;
}
static termhost_feature_t *factory_create(const termhost_feature_factory_t *f, const char *id,
                                          const termhost_scene_info_t *scene, termhost_error_t *err) {
   (void)f; (void)id; (void)scene; (void)err;
   return (termhost_feature_t *)&instance;
}
static const termhost_feature_factory_t factory = { sizeof(termhost_feature_factory_t), factory_count, factory_get, factory_create };
static bool plugin_init(const termhost_host_t *host, termhost_error_t *err) { (void)host; (void)err; return true; }
static void plugin_deinit(void) {}
static const void *plugin_get_factory(const char *id) { return strcmp(id, TERMHOST_FEATURE_FACTORY_ID) == 0 ? &factory : NULL; }
static const termhost_plugin_entry_t entry = {
   { TERMHOST_ABI_MAJOR, TERMHOST_ABI_MINOR_NEEDED, TERMHOST_ABI_PATCH }, sizeof(termhost_plugin_entry_t),
   "org.termhost.examples.actions-c", "1.0.0", plugin_init, plugin_deinit, plugin_get_factory
};
TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { return &entry; }
