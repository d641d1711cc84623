/* termhost/services/config.h: per-feature settings after the deployment policy was applied.
 *
 * Settings come from the operator's policy (/etc/termhost/policy.json) and the user's file
 * ($XDG_CONFIG_HOME/termhost/config.json); a user value wins only where the operator allowed
 * the user to override that key. */
#ifndef TERMHOST_SERVICE_CONFIG_H
#define TERMHOST_SERVICE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "../error.h"
#include "../host.h"

#define TERMHOST_SERVICE_CONFIG "termhost.config/1"

typedef struct termhost_host_config {  /* implemented by the host */
   uint32_t struct_size;
   /* Copies the effective value of setting `key` of feature `feature_id`, encoded as JSON
    * ("30", "\"fast\"", "true", "{...}"), into buf (NUL-terminated).
    * feature_id, key: borrowed. buf: owned by the caller, buf_size bytes.
    * Returns TERMHOST_OK; TERMHOST_ERR_NOT_FOUND when nobody set it (use your default);
    * TERMHOST_ERR_TOO_LARGE when buf is too small (*needed, if not NULL, gets the size).
    * [any-thread] */
   termhost_status (*get_setting)(const termhost_host_t *host, const char *feature_id,
                                  const char *key, char *buf, size_t buf_size, size_t *needed,
                                  termhost_error_t *err);
   /* 1 when the feature will run: enabled by policy and configuration, and (once features are
    * resolved, i.e. after every plugin's init) with its dependencies and services available.
    * During init() only the policy is known. [any-thread] */
   int32_t (*is_feature_enabled)(const termhost_host_t *host, const char *feature_id);
} termhost_host_config_t;

#endif
