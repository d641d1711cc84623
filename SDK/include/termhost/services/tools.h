/* termhost/services/tools.h: tools that features contribute to the assistant and to MCP clients.
 * Added in ABI 1.3.
 *
 * A tool is one operation a model (the Assistant, or an outside agent over `termhost mcp`) may
 * ask for: run a command on a host, read a remote file, read metrics. A feature declares its
 * tools statically in termhost_feature_descriptor_t.tools, so `termhost tools` and the MCP
 * catalog list them from the manifest without running plugin code, and implements them behind
 * the termhost.tool-provider/1 table that its instance returns from get_service().
 *
 * Who decides whether a call runs: never the tool. The consumer (the Assistant's policy) decides
 * Deny, Ask or Approve before calling, from the flags declared here; the host validates the
 * arguments against input_schema before the provider sees them. A tool must therefore not
 * prompt, and must never take a credential or a trust decision through its arguments: an
 * unknown host key or a missing password is a tool error whose message says what the user
 * should run (for example "run `termhost ssh web-2` once to review its host key").
 *
 * Which features may offer tools: process-scope ones only (like provides_services), since a
 * call may come from any scene or from none (MCP). A scene or workspace feature that declares
 * tools has each refused, with the reason, in `termhost doctor`, `features` and `tools`; so is
 * a tool whose name, description or input_schema breaks the rules below, and a tool whose name
 * an earlier feature (in start order) already offers. A refused tool is left out of the catalog;
 * the feature itself still runs.
 *
 * Results and errors are data for a model: JSON text, bounded (say how much was left out), with
 * control characters escaped by the JSON encoding. Never put a secret in them. */
#ifndef TERMHOST_SERVICE_TOOLS_H
#define TERMHOST_SERVICE_TOOLS_H
#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"

/* Flags of a tool (termhost_tool_descriptor_t.flags). */
#define TERMHOST_TOOL_READ_ONLY 0x1u     /* changes nothing anywhere: may run in planning runs
                                          * and needs no approval under the default policy */
#define TERMHOST_TOOL_PARALLEL_SAFE 0x2u /* may run at the same time as other parallel-safe
                                          * calls of the same batch */

/* Run modes that may use a tool (termhost_tool_descriptor_t.run_modes). A planning run may only
 * call read-only tools whatever this says; 0 means both modes. */
#define TERMHOST_TOOL_MODE_PLANNING 0x1u
#define TERMHOST_TOOL_MODE_ACTING 0x2u

/* The longest result the host accepts from one call; a longer one is cut and the model told. */
#define TERMHOST_TOOL_RESULT_LIMIT (1024u * 1024u)

/* Static description of one tool. Every pointer is owned by the plugin, valid until deinit(). */
typedef struct termhost_tool_descriptor {
   uint32_t struct_size;
   const char *name;          /* [a-z][a-z0-9_]{0,63}, unique across enabled features:
                               * "ssh_exec". A clash refuses the later feature's tool, named. */
   const char *description;   /* what it does and when to use it, for the model; one paragraph */
   const char *input_schema;  /* JSON Schema of the arguments: an object schema ("type":
                               * "object") using only "type", "properties", "required",
                               * "additionalProperties", "enum", "minimum", "maximum",
                               * "maxLength", "items", "description"; any other keyword, or
                               * text that is not JSON, refuses the tool, named */
   uint32_t flags;            /* TERMHOST_TOOL_* */
   uint32_t run_modes;        /* TERMHOST_TOOL_MODE_* bits; 0 means every mode */
} termhost_tool_descriptor_t;

/* The provider a feature with tools implements. */
#define TERMHOST_TOOL_PROVIDER "termhost.tool-provider/1"

/* Receives the result of a call: UTF-8 JSON text (any JSON value; an object is usual). data is
 * borrowed for the call; the host copies it. Call it at most once. [any-thread] */
typedef void (*termhost_tool_result_sink)(void *sink_user, const char *json, size_t size);

/* One call. Owned by the caller, valid until call() returns. */
typedef struct termhost_tool_call {
   uint32_t struct_size;
   const char *tool;            /* the descriptor's name */
   const char *arguments_json;  /* a JSON object that matched input_schema; from the host,
                                 * the checked value written again (compact, keys sorted) */
   uint64_t call_id;            /* unique in the process; cancel() names a call by it */
   termhost_scene_id scene;     /* the scene the call serves (0: none, e.g. MCP); the call ends
                                 * early when this scene is cancelled (termhost.cancel/1) */
   termhost_tool_result_sink write_result;
   void *sink_user;
} termhost_tool_call_t;

/* Implemented by a feature that declares tools; returned by its get_service() for
 * TERMHOST_TOOL_PROVIDER (it need not be listed in provides_services: only the host asks for
 * it, per instance). Provider context rules apply (see host.h). */
typedef struct termhost_tool_provider termhost_tool_provider_t;
struct termhost_tool_provider {
   uint32_t struct_size;
   void *context;   /* the instance's own state; consumers never touch it */
   /* Runs one call to completion, writing the result through call->write_result and returning
    * TERMHOST_OK; or returns an error code with a message for the model and the user in *err
    * (TERMHOST_ERR_INVALID_ARGUMENT for a bad host ID, TERMHOST_ERR_DENIED for an unknown host
    * key, TERMHOST_ERR_CANCELLED after cancel(), TERMHOST_ERR_TIMEOUT for its deadline).
    * Parallel-safe tools may be called concurrently. [any-thread] */
   termhost_status (*call)(const termhost_tool_provider_t *self, const termhost_tool_call_t *call,
                           termhost_error_t *err);
   /* Asks the running call call_id to stop soon; call() still returns (CANCELLED). Unknown or
    * finished IDs are ignored. Must not wait for call() to return. [any-thread] */
   void (*cancel)(const termhost_tool_provider_t *self, uint64_t call_id);
};

/* ---- The host's catalog, for consumers (the Assistant, `termhost mcp`) ---- */
#define TERMHOST_SERVICE_TOOLS "termhost.tools/1"

typedef struct termhost_host_tools { /* implemented by the host. Added in ABI 1.3. */
   uint32_t struct_size;
   /* Writes the catalog of every enabled feature's tools as one JSON array, sorted by name:
    * [{"name","description","input_schema":{...},"read_only":bool,"parallel_safe":bool,
    *   "modes":["planning","acting"],"feature":"org.termhost.ssh"}]. sink: called once.
    * [any-thread] */
   termhost_status (*catalog)(const termhost_host_t *host,
                              void (*sink)(void *user, const char *json, size_t size),
                              void *user, termhost_error_t *err);
   /* Validates call->arguments_json against the tool's schema (TERMHOST_ERR_INVALID_ARGUMENT,
    * naming the argument, and no call), then calls the providing instance and hands its result
    * to call->write_result before returning. Policy is the caller's job.
    * TERMHOST_ERR_NOT_FOUND for a tool no enabled feature offers; TERMHOST_ERR_CANCELLED when
    * call->scene was cancelled before the call started; TERMHOST_ERR_INTERNAL for a result that
    * is not JSON. A result longer than TERMHOST_TOOL_RESULT_LIMIT arrives as
    * {"truncated":true,"note":"...how many bytes were left out...","partial_result":"..."}.
    * A crash inside the provider is recorded as tool_call("NAME") and the plugin is quarantined
    * on the next start, as for a command. call_id: any number below 2^63 (the host's own calls
    * use the upper half) that no running call has; TERMHOST_ERR_INVALID_ARGUMENT otherwise.
    * [any-thread] */
   termhost_status (*call)(const termhost_host_t *host, const termhost_tool_call_t *call,
                           termhost_error_t *err);
   /* Forwards cancel() to the provider running call_id. [any-thread] */
   void (*cancel)(const termhost_host_t *host, uint64_t call_id);
} termhost_host_tools_t;

#endif /* TERMHOST_SERVICE_TOOLS_H */
