/* termhost/host.h: what the host hands a plugin.
 *
 * Each plugin receives its own termhost_host_t: the host uses the pointer to know which plugin
 * is calling (so the store and secrets services can namespace by plugin). Services are reached
 * by string ID with a version suffix ("termhost.store/1"); the ABI grows by adding IDs.
 *
 * Provider context (ABI 1.2). A feature that provides a service returns, from its own
 * get_service, a vtable of its instance: each instance allocates its table (at create or
 * activate; valid until its destroy()) and fills a `void *context` member with its own state.
 * A service table added in 1.2 or later starts { uint32_t struct_size; void *context; ... } and
 * its entry points take the table as their first argument (`self`), reading self->context; a
 * table that existed before 1.2 appends `context` (termhost_ssh_transport_t does) and reaches
 * it from entry points that take a handle the instance made, or, for one that takes only the
 * caller's host, through caller->get_service(caller, ID). So no provider keeps its host or
 * state in a global: two instances (two features of one plugin, or one in a test harness next
 * to the real one) each serve their own, and consumers built for 1.0/1.1 call the same
 * entry points as before. Consumers never read or write `context`. */
#ifndef TERMHOST_HOST_H
#define TERMHOST_HOST_H

#include <stdint.h>
#include "version.h"

typedef struct termhost_host termhost_host_t;

struct termhost_host {
   /* sizeof(termhost_host_t) as the host built it. Check it before reading a field that was
    * appended after ABI 1.0. */
   uint32_t struct_size;

   /* The ABI the host implements; abi.minor >= the plugin's minor. */
   termhost_version_t abi;

   /* "termhost" and the host's version. Static, owned by the host. */
   const char *name;
   const char *version;

   /* The ID of the plugin this handle belongs to. Owned by the host, valid until deinit(). */
   const char *plugin_id;

   /* Reserved for the host; plugins must not touch it. */
   void *host_data;

   /* Returns the vtable registered under service_id: a host service ("termhost.log/1") or a
    * service that an active feature provides (see provides_services in feature.h). Returns NULL
    * if nobody offers it, or if its provider is disabled or not yet activated.
    * service_id: borrowed for this call. A host service's vtable stays valid until the calling
    * plugin's deinit(); a feature-provided one until the providing instance's destroy() (so
    * look it up again rather than caching it across background/expire). Cast it to the type
    * its header names.
    * [any-thread] */
   const void *(*get_service)(const termhost_host_t *host, const char *service_id);
};

#endif /* TERMHOST_HOST_H */
