/* termhost/services/events.h: publish and subscribe between features.
 *
 * Topics are reverse-DNS strings ("org.termhost.ssh.connected"); payloads are UTF-8 JSON.
 * Host topics and their payloads:
 *   "termhost.phase.changed"        {"phase":"active"|"background"|"expired"|"terminating"}
 *   "termhost.scene.attached"       {"scene":N}
 *   "termhost.scene.detached"       {"scene":N}
 *   "termhost.workspace.published"  {"scene":N,"workspace":W,"index":I}  (before it connects)
 *   "termhost.workspace.closed"     {"scene":N,"workspace":W}
 *   "termhost.feature.failed"       {"feature":"<id>"}
 * Topics beginning with "termhost." are the host's: a plugin's publish of one is refused with
 * TERMHOST_ERR_DENIED (a plugin that could publish them could forge a phase change or an audit
 * record); publish under your plugin's ID. Subscribing to them is open to every plugin.
 * Likewise a topic under another loaded plugin's ID ("org.termhost.assistant.approval.pending"
 * from any plugin but org.termhost.assistant) is refused with TERMHOST_ERR_DENIED: a plugin's
 * events come from that plugin. (Enforced since ABI 1.8.)
 * Delivery is synchronous, on the publisher's thread, in subscription order. */
#ifndef TERMHOST_SERVICE_EVENTS_H
#define TERMHOST_SERVICE_EVENTS_H

#include <stdint.h>
#include "../error.h"
#include "../host.h"

#define TERMHOST_SERVICE_EVENTS "termhost.events/1"

/* topic and payload_json are borrowed for the call. Must not block for long. [any-thread] */
typedef void (*termhost_event_handler)(void *user, const char *topic, const char *payload_json);

typedef struct termhost_host_events {  /* implemented by the host */
   uint32_t struct_size;

   /* Delivers payload_json (may be NULL for "null") to every subscriber of topic.
    * Both borrowed. [any-thread] */
   termhost_status (*publish)(const termhost_host_t *host, const char *topic,
                              const char *payload_json, termhost_error_t *err);

   /* Subscribes handler to topic ("*" for every topic). *token identifies the subscription for
    * unsubscribe. user is passed back as is. Subscriptions end at the plugin's deinit() at the
    * latest. [any-thread] */
   termhost_status (*subscribe)(const termhost_host_t *host, const char *topic,
                                termhost_event_handler handler, void *user, uint64_t *token,
                                termhost_error_t *err);

   /* Ends a subscription; after it returns the handler is not called again. [any-thread] */
   void (*unsubscribe)(const termhost_host_t *host, uint64_t token);
} termhost_host_events_t;

#endif
