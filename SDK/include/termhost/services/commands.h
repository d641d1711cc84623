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

/* name, summary, feature_id: borrowed for the call. Return 0 to continue. */
typedef int32_t (*termhost_command_visitor)(void *user, const char *name, const char *summary,
                                            const char *feature_id);

typedef struct termhost_host_commands { /* implemented by the host */
   uint32_t struct_size;

   /* Visits every command of every enabled feature, sorted by name. [main] */
   void (*list)(const termhost_host_t *host, termhost_command_visitor visitor, void *user);

   /* Runs a contributed command in scene, as if typed after `termhost`; *exit_status gets its
    * result. argv: argc borrowed strings, argv[0] the command name.
    * TERMHOST_ERR_NOT_FOUND when no enabled feature contributes argv[0]. [main] */
   termhost_status (*run)(const termhost_host_t *host, termhost_scene_id scene, int32_t argc,
                          const char *const *argv, int32_t *exit_status, termhost_error_t *err);
} termhost_host_commands_t;

#endif
