/* termhost/feature.h: features, their factory, and their lifecycle.
 *
 * A plugin contributes features through the factory registered under
 * TERMHOST_FEATURE_FACTORY_ID. Each feature has a stable reverse-DNS ID, an order key and
 * dependencies; the host's registry orders them, drops those whose dependencies are missing or
 * disabled, and creates instances per scope:
 *   process    one instance for the process (stores, queues, managers, samplers);
 *   scene      one per attached front end (a CLI invocation today);
 *   workspace  one per workspace, which belongs to exactly one scene and owns live sessions.
 *
 * Lifecycle of an instance (every callback [main]):
 *   create -> activate -> { scene_attached | scene_detached | background | foreground |
 *   expire }* -> shutdown -> destroy
 * background/foreground follow the aggregated phase (the process is in background only when
 * every scene is); expire means "the background grace ran out: retire live work (connections,
 * listeners) but keep the intent to resume"; foreground after expire resumes from that intent.
 * shutdown is called once, in reverse feature order, and is bounded by the host (3 s by
 * default). When the bound expires, the host stops calling into plugins: the instance still in
 * shutdown (the only one named), the instances after it, every destroy() and every deinit()
 * are skipped, and the process exits. Scene and workspace instances retired earlier (a
 * detached scene, a closed workspace) are bounded the same way. destroy() waits, within the
 * same bound, for a command still running in the instance (one a signal asked to stop); an
 * instance whose run_command() has not returned is never destroyed, nor its plugin
 * deinitialized (see termhost.cancel/1 in services/commands.h). */
#ifndef TERMHOST_FEATURE_H
#define TERMHOST_FEATURE_H

#include <stdint.h>
#include "error.h"
#include "host.h"

#define TERMHOST_FEATURE_FACTORY_ID "termhost.feature-factory/1"

struct termhost_tool_descriptor; /* services/tools.h */
struct termhost_action_descriptor; /* action.h */

typedef enum termhost_scope {
   TERMHOST_SCOPE_PROCESS = 0,
   TERMHOST_SCOPE_SCENE = 1,
   TERMHOST_SCOPE_WORKSPACE = 2
} termhost_scope_t;

/* Identifies a scene (0 means "no scene": background work that cannot prompt). */
typedef uint64_t termhost_scene_id;

/* A CLI subcommand a feature contributes ("termhost hello ..."). Static, owned by the plugin. */
typedef struct termhost_command_descriptor {
   uint32_t struct_size;
   const char *name;     /* one word, [a-z0-9-], unique across enabled features */
   const char *summary;  /* one line for `termhost --help` */
   const char *usage;    /* full help text for `termhost <name> --help`; may be NULL */
} termhost_command_descriptor_t;

/* Static description of a feature. Every pointer is owned by the plugin and valid until
 * deinit(). String lists are NULL-terminated arrays; a NULL list means empty. */
typedef struct termhost_feature_descriptor {
   uint32_t struct_size;
   const char *id;               /* reverse DNS, stable forever: "org.termhost.sftp" */
   const char *version;          /* semantic version of the feature */
   const char *display_name;     /* "SFTP" */
   const char *description;      /* one sentence; may be NULL */
   int32_t order;                /* smaller runs earlier; ties are broken by ID */
   termhost_scope_t scope;
   const char *const *after;     /* feature IDs this one must start after (soft) */
   const char *const *before;    /* feature IDs this one must start before (soft) */
   const char *const *requires_features;  /* hard: missing or disabled means not created */
   const char *const *requires_services;  /* service IDs ("org.termhost.ssh.transport/1") */
   const char *const *provides_services;  /* service IDs this feature's get_service offers;
                                           * honoured for process-scope features only, since a
                                           * host-wide lookup cannot choose among scenes */
   const termhost_command_descriptor_t *const *commands; /* NULL-terminated; may be NULL */
   /* Added in ABI 1.3: the tools this feature offers to the assistant and MCP clients
    * (services/tools.h), NULL-terminated; may be NULL. Read only when struct_size covers it.
    * Honoured for process-scope features only; a scene or workspace feature's are refused. */
   const struct termhost_tool_descriptor *const *tools;
   /* Added in ABI 1.3: typed actions, exported C functions the host calls through libffi
    * (action.h), NULL-terminated; may be NULL. Read only when struct_size covers it.
    * Honoured for process-scope features only, like tools. */
   const struct termhost_action_descriptor *const *actions;
   /* Added in ABI 1.6: 1 when this feature's run_command() may be called while another of its
    * run_command() calls runs, on another thread. The daemon (where every client's command
    * runs) then runs several of this feature's commands at once, one per client, and they may
    * overlap each other, but never a command of a feature of the plugin that did not set it,
    * nor any other [main] callback but those "What may overlap run_command()" lists
    * (Docs/ABI.md). 0, and every plugin built for an older ABI: never; the daemon runs one
    * command of the plugin at a time and a second one runs in its client's own process.
    * Set it only when the feature keeps each command's state per invocation or behind its own
    * lock. Read only when struct_size covers it; the manifest repeats it
    * ("concurrentCommands": true). */
   int32_t concurrent_commands;
} termhost_feature_descriptor_t;

/* Passed to each lifecycle callback; describes the scene involved, if any. Owned by the host,
 * valid for the duration of the call. */
typedef struct termhost_scene_info {
   uint32_t struct_size;
   termhost_scene_id scene;     /* 0 for process-wide calls */
   uint64_t workspace;          /* 0 unless the instance is workspace-scoped */
   int32_t has_terminal;        /* 1 when the scene can prompt the user */
} termhost_scene_info_t;

/* One invocation of a contributed command. Owned by the host, valid during run_command. */
typedef struct termhost_command_invocation {
   uint32_t struct_size;
   const char *command;           /* the command's name */
   int32_t argc;                  /* arguments after the command name */
   const char *const *argv;       /* argc UTF-8 strings */
   termhost_scene_id scene;       /* the invoking scene; pass it to the interact service */
   int32_t stdin_fd, stdout_fd, stderr_fd;  /* the scene's streams, borrowed */
   int32_t json_output;           /* 1 when the user passed --json */
} termhost_command_invocation_t;

typedef struct termhost_feature termhost_feature_t;

/* A live feature instance, implemented by the plugin. Unused callbacks may be NULL. */
struct termhost_feature {
   uint32_t struct_size;
   void *feature_data;   /* the plugin's own state; the host never touches it */

   /* Starts the instance: register event subscriptions, open collections, start timers.
    * Returns TERMHOST_OK, or a code plus message: the feature is then reported as failed and
    * its dependents are not created. [main] */
   termhost_status (*activate)(const termhost_feature_t *f, const termhost_scene_info_t *info,
                               termhost_error_t *err);
   void (*scene_attached)(const termhost_feature_t *f, const termhost_scene_info_t *info);
   void (*scene_detached)(const termhost_feature_t *f, const termhost_scene_info_t *info);
   void (*background)(const termhost_feature_t *f);
   void (*foreground)(const termhost_feature_t *f);
   void (*expire)(const termhost_feature_t *f);

   /* Stops work and flushes state. Called once; bounded by the host. [main] */
   void (*shutdown)(const termhost_feature_t *f);

   /* Frees the instance. Skipped when the shutdown bound expired, and never called while a
    * run_command() of this instance is running (see the top of this file). [main] */
   void (*destroy)(const termhost_feature_t *f);

   /* Returns the vtable for a service listed in provides_services, or NULL.
    * The vtable must stay valid until destroy(). [any-thread] */
   const void *(*get_service)(const termhost_feature_t *f, const char *service_id);

   /* Runs one of the descriptor's commands and returns its exit status (0 success, 1 failure,
    * 2 usage error; see Docs/Operators.md). Write output to inv->stdout_fd/stderr_fd. On
    * Ctrl-C the host asks it to stop through termhost.cancel/1 (services/commands.h) and waits
    * for it to return (130 by convention). [main; some callbacks may overlap it, see entry.h] */
   int32_t (*run_command)(const termhost_feature_t *f, const termhost_command_invocation_t *inv);
};

typedef struct termhost_feature_factory termhost_feature_factory_t;

/* Implemented by the plugin; obtained from get_factory(TERMHOST_FEATURE_FACTORY_ID). */
struct termhost_feature_factory {
   uint32_t struct_size;

   /* Number of features this plugin contributes. [main & initialized] */
   uint32_t (*count)(const termhost_feature_factory_t *factory);

   /* Descriptor at index (0 <= index < count), owned by the plugin. [main & initialized] */
   const termhost_feature_descriptor_t *(*get_descriptor)(const termhost_feature_factory_t *factory,
                                                           uint32_t index);

   /* Creates an instance of feature_id for the scope in info. Returns an instance owned by the
    * plugin until destroy(), or NULL with a reason in *err. [main & initialized] */
   termhost_feature_t *(*create)(const termhost_feature_factory_t *factory, const char *feature_id,
                                 const termhost_scene_info_t *info, termhost_error_t *err);
};

#endif /* TERMHOST_FEATURE_H */
