/* termhost/version.h: the ABI version a plugin was built against and the host implements.
 *
 * Compatibility promise: the major version must match exactly. A plugin built for minor N
 * loads in any host whose minor is >= N. Within a major version structs only grow at the end
 * (see struct_size in each struct) and service or factory IDs are only ever added. A change
 * that cannot be expressed that way gets a new ID ("termhost.store/2"), never an edit in place. */
#ifndef TERMHOST_VERSION_H
#define TERMHOST_VERSION_H

#include <stdint.h>

/* History (append-only):
 *   1.0  entry, host, feature factory; services log, config, store, secrets, interact, events,
 *        commands.
 *   1.1  termhost_host_interact_t.can_prompt. */
#define TERMHOST_ABI_MAJOR 1
#define TERMHOST_ABI_MINOR 1
#define TERMHOST_ABI_PATCH 0

typedef struct termhost_version {
   uint32_t major;
   uint32_t minor;
   uint32_t patch;
} termhost_version_t;

/* The version this header describes; put it in termhost_plugin_entry_t.abi. */
#define TERMHOST_ABI_INIT { TERMHOST_ABI_MAJOR, TERMHOST_ABI_MINOR, TERMHOST_ABI_PATCH }

#endif /* TERMHOST_VERSION_H */
