/* termhost/version.h: the ABI version a plugin was built against and the host implements.
 *
 * Compatibility promise: the major version must match exactly. A plugin built for minor N
 * loads in any host whose minor is >= N. Within a major version structs only grow at the end
 * (see struct_size in each struct) and service or factory IDs are only ever added. A change
 * that cannot be expressed that way gets a new ID ("termhost.store/2"), never an edit in place. */
#ifndef TERMHOST_VERSION_H
#define TERMHOST_VERSION_H

#include <stddef.h>
#include <stdint.h>

/* History (append-only). Each appended member is marked "Added in ABI 1.N" where it is declared.
 *   1.0  entry, host, feature factory; services log, config, store, secrets, interact, events,
 *        commands.
 *   1.1  termhost_host_interact_t.can_prompt; termhost_ssh_transport_t.watch, open_exec,
 *        splice_direct_tcpip, end_spliced; termhost_sftp_transfer_t.bytes_per_second.
 *   1.2  service termhost.cancel/1 (Ctrl-C reaches a running command); provider context
 *        (termhost_ssh_transport_t.context, one table per providing instance);
 *        termhost_ssh_transport_t.exec_bounded (deadline and cancellation); TERMHOST_HAS_FIELD
 *        and TERMHOST_ABI_MINOR_NEEDED.
 *   1.3  tools: termhost_feature_descriptor_t.tools, termhost_tool_descriptor_t, the provider
 *        table termhost.tool-provider/1 and the host's catalog service termhost.tools/1
 *        (services/tools.h); typed actions: termhost_feature_descriptor_t.actions,
 *        termhost_action_descriptor_t (action.h).
 *        sync: termhost_host_store_t.declare_syncable and termhost_sync_merge (services/store.h),
 *        the sync provider's service termhost.sync-store/1 (services/sync_store.h).
 *   1.4  sync checks: termhost_sync_check and termhost_host_store_t.declare_sync_check
 *        (services/store.h), termhost_host_sync_store_t.check (services/sync_store.h).
 *   1.5  persistent terminal sessions: the SSH plugin's service org.termhost.ssh.sessions/1
 *        (ssh/sessions.h).
 *   1.6  the user's environment per scene: service termhost.environment/1
 *        (services/environment.h); the daemon: service termhost.daemon/1 (services/daemon.h);
 *        termhost_feature_descriptor_t.concurrent_commands (feature.h).
 *   1.7  termhost_host_environment_t.list_names: the names of a scene's variables
 *        (services/environment.h).
 *   1.8  termhost_ssh_transport_t.open_with and TERMHOST_SSH_OPEN_SAVED, _SHARED: opens that
 *        share one connection per host in the daemon (ssh/transport.h); the sessions
 *        service's "pendingApprovals", state "waiting" and "approval" events (ssh/sessions.h). */
#define TERMHOST_ABI_MAJOR 1
#define TERMHOST_ABI_MINOR 8
#define TERMHOST_ABI_PATCH 0

typedef struct termhost_version {
   uint32_t major;
   uint32_t minor;
   uint32_t patch;
} termhost_version_t;

/* The minor version a plugin needs, which is the minor it declares in termhost_plugin_entry_t.abi
 * (the manifest derived from the library, `termhost plugins manifest`, repeats it in "abi").
 * By default the minor of these headers. A plugin built against newer headers that uses
 * nothing newer may declare less, so that it also loads in an older host:
 *     #define TERMHOST_ABI_MINOR_NEEDED 0
 *     #include <termhost/termhost.h>
 * Contract: such a plugin must then check, with TERMHOST_HAS_FIELD, every member added after
 * the minor it declares before reading or calling it (the host's structs are only as large as
 * the host's own ABI), and must not look up services that came later without handling NULL. */
#ifndef TERMHOST_ABI_MINOR_NEEDED
#define TERMHOST_ABI_MINOR_NEEDED TERMHOST_ABI_MINOR
#endif

/* The version the plugin declares; put it in termhost_plugin_entry_t.abi. */
#define TERMHOST_ABI_INIT { TERMHOST_ABI_MAJOR, TERMHOST_ABI_MINOR_NEEDED, TERMHOST_ABI_PATCH }

/* Whether the struct at ptr (which begins with, or contains, a uint32_t struct_size telling how
 * large its producer built it) has member `field` of `type`: struct_size covers the member's
 * last byte. Use it before touching a member marked "Added in ABI 1.N" in a struct the other
 * side made; the host uses the same rule (in Swift: TermhostStruct.has) on every struct a
 * plugin hands it. A NULL ptr has no fields. */
#define TERMHOST_HAS_FIELD(ptr, type, field) \
   ((ptr) != NULL && (size_t)(ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

#endif /* TERMHOST_VERSION_H */
