/* termhost/host.h: what the host hands a plugin.
 *
 * Each plugin receives its own termhost_host_t: the host uses the pointer to know which plugin
 * is calling (so the store and secrets services can namespace by plugin). Services are reached
 * by string ID with a version suffix ("termhost.store/1"); the ABI grows by adding IDs. */
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
