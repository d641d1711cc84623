/* termhost/entry.h: the one symbol a plugin exports.
 *
 * A plugin is a shared library that exports exactly one symbol: the function
 * TERMHOST_ENTRY_SYMBOL ("termhost_plugin_entry", type termhost_plugin_entry_fn) returning a
 * pointer to its const termhost_plugin_entry_t. Everything else it offers is reached through
 * get_factory(); everything the host offers is reached through termhost_host_t.get_service().
 * Export nothing else (use a linker version script, see Docs/PluginGuide.md) so plugins cannot
 * interpose on each other.
 *
 * Rationale for a function rather than a data symbol (CLAP exports `clap_entry` as data):
 * Swift cannot export a statically initialized C data symbol, and a plugin written in Swift must
 * be as first-class as one written in C. The function must do nothing but return the pointer.
 *
 * Thread tags, used on every function in these headers:
 *   [main]        serialized by the host: no two [main] calls into a plugin run at the same
 *                 time, but they may come from different OS threads (the CLI's main thread,
 *                 its signal queue, the background-grace timer, the bounded shutdown thread);
 *                 do not rely on thread identity. One exception, on purpose: a command can
 *                 run for a long time (a terminal session), so while run_command() is still
 *                 running, exactly these may arrive on another thread: background and
 *                 foreground (SIGTSTP, SIGCONT), expire (the grace timer), scene_detached
 *                 (SIGHUP) and shutdown (SIGINT, SIGTERM, SIGHUP, after the host asked the
 *                 command to stop through termhost.cancel/1, see services/commands.h); that is
 *                 how a suspended or terminated CLI reaches the session. Make them safe against
 *                 run_command(). A command may also run other commands (itself included)
 *                 through termhost.commands/1: those run_command() calls are nested on the
 *                 same thread. Never while run_command() of an instance is running: its
 *                 create(), activate() and destroy(), and the plugin's init() and deinit(); a
 *                 command that never returns is abandoned and they are never called.
 *   [any-thread]  may be called from any thread, concurrently.
 *   [session]     the serial executor of one SSH session (see the SSH transport service).
 * A tag may add a state: [main & !initialized] means a [main] call made before init(),
 * [main & initialized] one made after it (on whichever thread, as for [main]).
 *
 * Rationale for init()/deinit() rules: hosts differ on whether they retry, so the contract is
 * fixed here. The host calls init() once per process and deinit() at most once, after every
 * feature instance of the plugin was destroyed. The host never calls dlclose(): a plugin image
 * stays mapped until the process exits (unloading a Swift image crashes the Swift runtime). */
#ifndef TERMHOST_ENTRY_H
#define TERMHOST_ENTRY_H

#include <stdbool.h>
#include "version.h"
#include "error.h"
#include "host.h"

#define TERMHOST_ENTRY_SYMBOL "termhost_plugin_entry"

typedef struct termhost_plugin_entry {
   /* The ABI the plugin was built against: TERMHOST_ABI_INIT. Read before anything else. */
   termhost_version_t abi;

   /* sizeof(termhost_plugin_entry_t) as the plugin was compiled. */
   uint32_t struct_size;

   /* The plugin's reverse-DNS ID and version ("org.example.hello", "1.2.0"); the manifest
    * derived from the library repeats them as "id" and "version". Static strings owned by the
    * plugin. */
   const char *plugin_id;
   const char *plugin_version;

   /* Required. Prepares the plugin. Keep it cheap: no network, no threads that outlive a
    * failure. init() runs once in each process that loads the plugin: in the probe child
    * process (with in-memory services) the first time the host sees the file and again after
    * each change to it or its manifest, then once in every host process that loads it.
    * Do not fail because a service is missing: list it in requires_services and the host
    * will not create the feature without it (and says why).
    * host: owned by the host, valid until deinit() returns; keep the pointer.
    * Returns true on success; on failure writes a reason into *err and returns false, and the
    * host then never calls anything else of this plugin (not even deinit()).
    * [main & !initialized] */
   bool (*init)(const termhost_host_t *host, termhost_error_t *err);

   /* Releases what init() acquired. Called at most once, after every feature instance of the
    * plugin was destroyed. [main & initialized] */
   void (*deinit)(void);

   /* Returns the factory registered under factory_id (for instance
    * TERMHOST_FEATURE_FACTORY_ID), or NULL if the plugin has none.
    * factory_id: borrowed for this call. The returned pointer is owned by the plugin and must
    * stay valid until deinit(). [main & initialized] */
   const void *(*get_factory)(const char *factory_id);
} termhost_plugin_entry_t;

/* The exported symbol. Returns a pointer to a struct owned by the plugin, valid for the life of
 * the process. Must not fail, allocate per call, or have side effects. [any-thread] */
typedef const termhost_plugin_entry_t *(*termhost_plugin_entry_fn)(void);

/* Declares the entry point with default visibility; C plugins write
 *   TERMHOST_EXPORT const termhost_plugin_entry_t *termhost_plugin_entry(void) { ... } */
#if defined(__GNUC__) || defined(__clang__)
#define TERMHOST_EXPORT __attribute__((visibility("default")))
#else
#define TERMHOST_EXPORT
#endif

#endif /* TERMHOST_ENTRY_H */
