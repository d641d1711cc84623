/* termhost/error.h: status codes and the error record that crosses the boundary.
 *
 * No allocation crosses an image boundary: the caller owns a termhost_error_t (usually on its
 * stack) and the callee writes a code and a NUL-terminated UTF-8 message into it. Nothing
 * longjmps, throws or aborts across the boundary; every failure comes back this way. */
#ifndef TERMHOST_ERROR_H
#define TERMHOST_ERROR_H

#include <stdint.h>

typedef int32_t termhost_status;

enum {
   TERMHOST_OK = 0,
   TERMHOST_ERR_INVALID_ARGUMENT = 1, /* a parameter was NULL, malformed or out of range */
   TERMHOST_ERR_NOT_FOUND = 2,        /* no such key, secret, service, command or feature */
   TERMHOST_ERR_UNSUPPORTED = 3,      /* the host or plugin does not implement this */
   TERMHOST_ERR_DENIED = 4,           /* policy, the user, or a fail-closed rule said no */
   TERMHOST_ERR_IO = 5,               /* the file system or the network failed */
   TERMHOST_ERR_BUSY = 6,             /* a lock is held elsewhere; retrying may succeed */
   TERMHOST_ERR_CANCELLED = 7,        /* the user or shutdown cancelled the operation */
   TERMHOST_ERR_TIMEOUT = 8,          /* a deadline passed */
   TERMHOST_ERR_NON_INTERACTIVE = 9,  /* a prompt was needed but the scene has no terminal */
   TERMHOST_ERR_TOO_LARGE = 10,       /* a caller's buffer or a limit was too small */
   TERMHOST_ERR_INTERNAL = 11         /* a bug: the message says where */
};

/* Bytes in termhost_error_t.message, NUL included. Longer messages are truncated at a UTF-8
 * character boundary. */
#define TERMHOST_MESSAGE_SIZE 512

typedef struct termhost_error {
   termhost_status code;                 /* TERMHOST_OK until a callee writes a failure */
   char message[TERMHOST_MESSAGE_SIZE];  /* UTF-8, NUL-terminated, empty when code is OK */
} termhost_error_t;

#endif /* TERMHOST_ERROR_H */
