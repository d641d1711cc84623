/* termhost/services/log.h: leveled logging to stderr and the host's log file.
 * Each line is prefixed with the calling plugin's ID. Never pass secret values. */
#ifndef TERMHOST_SERVICE_LOG_H
#define TERMHOST_SERVICE_LOG_H

#include <stdint.h>
#include "../host.h"

#define TERMHOST_SERVICE_LOG "termhost.log/1"

typedef enum termhost_log_level {
   TERMHOST_LOG_DEBUG = 0,
   TERMHOST_LOG_INFO = 1,
   TERMHOST_LOG_WARNING = 2,
   TERMHOST_LOG_ERROR = 3
} termhost_log_level_t;

typedef struct termhost_host_log {    /* implemented by the host */
   uint32_t struct_size;
   /* Writes one line. message: UTF-8, borrowed for this call. Lines below the configured level
    * are dropped. Never fails. [any-thread] */
   void (*log)(const termhost_host_t *host, termhost_log_level_t level, const char *message);
} termhost_host_log_t;

#endif
