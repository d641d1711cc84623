/* termhost/action.h: typed actions, plain C functions the host calls through libffi.
 * Added in ABI 1.3.
 *
 * An action is an exported C function with an ordinary signature, declared beside the feature
 * in termhost_feature_descriptor_t.actions. The host reads the declaration from the manifest
 * (no plugin code runs to list it), checks at the probe that the symbol is defined by the
 * plugin's own library and exported by it, and calls it with arguments converted from the
 * command line (`termhost call FEATURE/ACTION ARG...`) or from JSON, range- and
 * encoding-checked first: a value the declared type cannot hold is a usage error naming the
 * parameter, and the function is not called. No symbol outside the declarations is ever called.
 *
 * The C signature follows from the declaration, in this order:
 *   1. each parameter, in order, as its C type (TERMHOST_ACTION_BYTES takes two C parameters,
 *      const void *data and size_t size);
 *   2. for a STRING, BYTES or JSON result: termhost_value_sink sink, void *sink_user;
 *   3. with TERMHOST_ACTION_TAKES_ERROR: termhost_error_t *err (its code is TERMHOST_OK on
 *      entry; write a code and message to fail, and the result is then ignored).
 * The return type is the result's C type for a scalar result, void otherwise.
 *
 *   TYPE                     C parameter                       C result
 *   TERMHOST_ACTION_VOID     (not a parameter type)            void
 *   TERMHOST_ACTION_BOOL     bool                              bool
 *   TERMHOST_ACTION_INT32    int32_t                           int32_t
 *   TERMHOST_ACTION_INT64    int64_t                           int64_t
 *   TERMHOST_ACTION_UINT32   uint32_t                          uint32_t
 *   TERMHOST_ACTION_UINT64   uint64_t                          uint64_t
 *   TERMHOST_ACTION_DOUBLE   double (finite)                   double
 *   TERMHOST_ACTION_STRING   const char * (UTF-8, NUL-ended)   through the sink, UTF-8
 *   TERMHOST_ACTION_BYTES    const void *, size_t              through the sink, any bytes
 *   TERMHOST_ACTION_JSON     const char * (valid JSON text)    through the sink, JSON text
 *
 * Every pointer the host passes is borrowed for the call only. Nothing the function allocates
 * crosses the boundary: results go through the sink, which copies. */
#ifndef TERMHOST_ACTION_H
#define TERMHOST_ACTION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "services/store.h"

/* Parameter and result types (termhost_action_param_t.type, termhost_action_descriptor_t.result). */
#define TERMHOST_ACTION_VOID 0u
#define TERMHOST_ACTION_BOOL 1u
#define TERMHOST_ACTION_INT32 2u
#define TERMHOST_ACTION_INT64 3u
#define TERMHOST_ACTION_UINT32 4u
#define TERMHOST_ACTION_UINT64 5u
#define TERMHOST_ACTION_DOUBLE 6u
#define TERMHOST_ACTION_STRING 7u
#define TERMHOST_ACTION_BYTES 8u
#define TERMHOST_ACTION_JSON 9u

/* Flags (termhost_action_descriptor_t.flags). */
#define TERMHOST_ACTION_READ_ONLY 0x1u   /* changes nothing anywhere: usable in planning runs,
                                          * no approval under the default policy */
#define TERMHOST_ACTION_TAKES_ERROR 0x2u /* the function's last parameter is termhost_error_t * */

/* Thread rule (termhost_action_descriptor_t.thread). */
#define TERMHOST_ACTION_MAIN_THREAD 0u   /* called on the process's main thread only */
#define TERMHOST_ACTION_ANY_THREAD 1u    /* may be called on any thread, concurrently */

/* At most this many declared parameters per action. */
#define TERMHOST_ACTION_MAX_PARAMS 16u
/* The longest result the host accepts through the sink; a longer one fails the call. */
#define TERMHOST_ACTION_RESULT_LIMIT (1024u * 1024u)

/* termhost_value_sink (services/store.h) receives a STRING, BYTES or JSON result: data is
 * borrowed for the call and the host copies it. Call it at most once (later calls are
 * ignored); not calling it gives an empty string or bytes, and fails a JSON result. */

/* One declared parameter. Static, owned by the plugin. */
typedef struct termhost_action_param {
   uint32_t struct_size;
   const char *name;         /* [a-z][a-z0-9_]{0,63}, unique in the action: the JSON key */
   uint32_t type;            /* TERMHOST_ACTION_*, not VOID */
   const char *description;  /* one line, for `termhost actions` and the tool's JSON Schema */
} termhost_action_param_t;

/* One action. Static, owned by the plugin, valid until deinit(). */
typedef struct termhost_action_descriptor {
   uint32_t struct_size;
   const char *name;                       /* [a-z][a-z0-9_-]{0,63}, unique in the feature */
   const char *summary;                    /* one line */
   const char *symbol;                     /* the exported C function */
   const termhost_action_param_t *params;  /* param_count entries; may be NULL when 0 */
   uint32_t param_count;                   /* at most TERMHOST_ACTION_MAX_PARAMS */
   uint32_t result;                        /* TERMHOST_ACTION_* */
   uint32_t flags;                         /* TERMHOST_ACTION_READ_ONLY | _TAKES_ERROR */
   uint32_t thread;                        /* TERMHOST_ACTION_MAIN_THREAD or _ANY_THREAD */
} termhost_action_descriptor_t;

/* Declaration helpers: the symbol is spelled once, as the function itself, so a renamed
 * function fails to compile instead of failing the probe.
 *
 *   TERMHOST_ACTION_EXPORT int32_t demo_add(int32_t a, int32_t b) { return a + b; }
 *   static const termhost_action_param_t add_params[] = {
 *      TERMHOST_PARAM("a", TERMHOST_ACTION_INT32, "first addend"),
 *      TERMHOST_PARAM("b", TERMHOST_ACTION_INT32, "second addend"),
 *   };
 *   TERMHOST_ACTION(add, "add", "a + b", demo_add, add_params, TERMHOST_ACTION_INT32,
 *                   TERMHOST_ACTION_READ_ONLY, TERMHOST_ACTION_ANY_THREAD);
 *   ... then &add in the feature's NULL-terminated actions list.
 * The function must also be listed in the library's version script (see PluginGuide.md). */
#define TERMHOST_ACTION_EXPORT __attribute__((visibility("default"), used))
#define TERMHOST_PARAM(name, type, description) \
   { sizeof(termhost_action_param_t), (name), (type), (description) }
#define TERMHOST_ACTION(var, name, summary, function, params, result, flags, thread) \
   static const termhost_action_descriptor_t var = { \
      sizeof(termhost_action_descriptor_t), (name), (summary), \
      (sizeof(&(function)) ? #function : #function), (params), \
      (uint32_t)(sizeof(params) / sizeof((params)[0])), (result), (flags), (thread) }
/* The same for an action without parameters. */
#define TERMHOST_ACTION_NO_PARAMS(var, name, summary, function, result, flags, thread) \
   static const termhost_action_descriptor_t var = { \
      sizeof(termhost_action_descriptor_t), (name), (summary), \
      (sizeof(&(function)) ? #function : #function), NULL, 0, (result), (flags), (thread) }

#endif /* TERMHOST_ACTION_H */
