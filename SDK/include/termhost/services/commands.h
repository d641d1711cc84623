/* termhost/services/commands.h: the host's command table.
 *
 * Features contribute commands statically through termhost_feature_descriptor_t.commands, so
 * `termhost --help` can list them from manifests without running plugin code, and a disabled
 * feature's commands disappear. This service lets a plugin see and run what is available. */
#ifndef TERMHOST_SERVICE_COMMANDS_H
#define TERMHOST_SERVICE_COMMANDS_H

#include <stdint.h>
#include "../error.h"
#include "../host.h"
#include "../feature.h"

#define TERMHOST_SERVICE_COMMANDS "termhost.commands/1"

/* The deepest nesting of run_command() calls on one thread that run() allows. Added in ABI 1.2
 * (before, there was no limit and about 4,400 levels crashed the host). */
#define TERMHOST_COMMAND_DEPTH_LIMIT 16

/* name, summary, feature_id: borrowed for the call. Return 0 to continue. */
typedef int32_t (*termhost_command_visitor)(void *user, const char *name, const char *summary,
                                            const char *feature_id);

typedef struct termhost_host_commands { /* implemented by the host */
   uint32_t struct_size;

   /* Visits every command of every enabled feature, sorted by name. [main] */
   void (*list)(const termhost_host_t *host, termhost_command_visitor visitor, void *user);

   /* Runs a contributed command in scene, as if typed after `termhost`; *exit_status gets its
    * result. argv: argc borrowed strings, argv[0] the command name.
    * TERMHOST_ERR_NOT_FOUND when no enabled feature contributes argv[0].
    * Nesting is bounded: a command run from inside a command (directly or through others)
    * counts one level per run_command() active on the calling thread, the outermost one
    * included. The call that would make it TERMHOST_COMMAND_DEPTH_LIMIT + 1 is refused with
    * TERMHOST_ERR_TOO_LARGE and a message naming the command and the limit; nothing runs.
    * (Unbounded, a command that runs itself overflows the host's stack.) [main] */
   termhost_status (*run)(const termhost_host_t *host, termhost_scene_id scene, int32_t argc,
                          const char *const *argv, int32_t *exit_status, termhost_error_t *err);
} termhost_host_commands_t;

/* ---- Cancelling a running command (Added in ABI 1.2) ----------------------------------------
 *
 * When the user presses Ctrl-C (SIGINT), or the host gets SIGTERM or SIGHUP, the host asks
 * every running command to stop through this service, then waits for run_command() to return,
 * at most the shutdown bound (3 s). Only after run_command() returned are the feature's
 * destroy() and the plugin's deinit() called; a command that has not returned when the bound
 * expires is abandoned: the host names it, and never calls destroy() or deinit() for its
 * plugin (its shutdown() still runs, like every feature's; see [main] in entry.h). The process
 * then exits with 128 + the signal (130 for Ctrl-C). A second SIGINT, SIGTERM or SIGHUP while
 * the host waits ends the process at once, without waiting for any plugin. The flag is per
 * scene so that a front end with several scenes can cancel one; the CLI has one scene, and a
 * signal cancels every scene (and scene 0).
 *
 * A command either polls is_cancelled() between steps, or registers a handler that wakes it
 * (writes to a pipe it polls, shuts down a socket), or both; then it cleans up and returns
 * (130 is the usual status for an interrupted command). The service is absent (get_service
 * returns NULL) in a host older than 1.2: such a host gives the command no chance to stop. */
#define TERMHOST_SERVICE_CANCEL "termhost.cancel/1"

/* Called once when scene is cancelled. user: what was passed to on_cancel. Runs on a host
 * thread (not in a signal handler: locks, write(), pthread calls are fine), possibly while
 * run_command() runs on another thread; keep it short, never wait for the command there and
 * never call run() of the commands service from it. */
typedef void (*termhost_cancel_handler)(void *user, termhost_scene_id scene);

typedef struct termhost_host_cancel { /* implemented by the host. Added in ABI 1.2. */
   uint32_t struct_size;

   /* 1 once the host asked the commands in scene to stop (scene 0: once the host began to shut
    * down for a signal), else 0. Cheap (no lock is taken until something was cancelled): poll it
    * as often as you like.
    * Stays 1 for the rest of the process. [any-thread] */
   int32_t (*is_cancelled)(const termhost_host_t *host, termhost_scene_id scene);

   /* Registers handler for scene (0: any cancellation). If scene is already cancelled, handler
    * runs on the calling thread before on_cancel returns. *token identifies the registration.
    * Handler and user are owned by the plugin and must stay valid until remove() returns.
    * TERMHOST_ERR_INVALID_ARGUMENT when handler or token is NULL. [any-thread] */
   termhost_status (*on_cancel)(const termhost_host_t *host, termhost_scene_id scene,
                                termhost_cancel_handler handler, void *user, uint64_t *token,
                                termhost_error_t *err);

   /* Ends a registration. When it returns, the handler is not running on another thread and
    * will not run again (called from inside the handler itself, it only prevents later runs).
    * An unknown or already removed token is ignored. Remove every registration before
    * run_command() returns or, for longer-lived ones, before destroy(). [any-thread] */
   void (*remove)(const termhost_host_t *host, uint64_t token);
} termhost_host_cancel_t;

#endif
